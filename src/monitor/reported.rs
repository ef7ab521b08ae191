//! What the clients report to the broker, as the monitor reads it: user statistics from all
//! clients taken together.

use libafl::monitors::stats::{
    user_stats::{UserStatsValue, TAG_CALIBRATE_STABILITY},
    ClientStatsManager,
};

use libafl_bolts::current_time;

use super::{screen::ClientLine, EDGES_STAT};

/// Edges found and the map's size, from the client that found most.
pub fn edges(stats: &ClientStatsManager) -> (u64, u64) {
    stats
        .client_stats()
        .values()
        .filter_map(|c| match c.get_user_stats(EDGES_STAT).map(|s| s.value()) {
            Some(UserStatsValue::Ratio(hit, total)) => Some((*hit, *total)),
            _ => None,
        })
        .max()
        .unwrap_or_default()
}

/// The most any client reported of the number `name`.
pub fn most(stats: &ClientStatsManager, name: &str) -> u64 {
    stats
        .client_stats()
        .values()
        .filter_map(|c| match c.get_user_stats(name).map(|s| s.value()) {
            Some(UserStatsValue::Number(n)) => Some(*n),
            _ => None,
        })
        .max()
        .unwrap_or_default()
}

/// Calibration's stability (LibAFL's calibration stage reports it under its tag), averaged over
/// the clients, in percent; None before any calibration.
pub fn stability(stats: &ClientStatsManager) -> Option<f64> {
    let shares = stats.client_stats().values().filter_map(|c| {
        let value = c
            .user_stats()
            .values()
            .find(|v| v.tag() == Some(TAG_CALIBRATE_STABILITY))?;
        match value.value() {
            UserStatsValue::Ratio(stable, all) if *all > 0 => Some(*stable as f64 / *all as f64),
            _ => None,
        }
    });
    let (sum, count) = shares.fold((0.0, 0u32), |(sum, n), s| (sum + s, n + 1));
    (count > 0).then(|| 100.0 * sum / f64::from(count))
}

/// One line per client that has reported, by id (execs/s over LibAFL's recent window).
pub fn clients(stats: &mut ClientStatsManager) -> Vec<ClientLine> {
    let now = current_time();
    let ids = stats.client_ids_sorted().to_vec();
    ids.into_iter()
        .filter_map(|id| {
            stats
                .update_client_stats_for(id, |c| {
                    c.enabled().then(|| ClientLine {
                        id: id.0,
                        execs: c.executions(),
                        execs_per_sec: c.execs_per_sec(now),
                        corpus: c.corpus_size(),
                        edges: match c.get_user_stats(EDGES_STAT).map(|s| s.value()) {
                            Some(UserStatsValue::Ratio(hit, total)) => Some((*hit, *total)),
                            _ => None,
                        },
                    })
                })
                .ok()
                .flatten()
        })
        .collect()
}
