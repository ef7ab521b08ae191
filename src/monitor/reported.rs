//! What the clients report to the broker, as the monitor reads it: user statistics from all
//! clients taken together.

use libafl::monitors::stats::{user_stats::UserStatsValue, ClientStatsManager};

use libafl_bolts::current_time;

use super::{screen::ClientLine, EDGES_STAT};
use crate::engine::UNSTABLE_EDGES_STAT;

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

/// Stability as AFL++ computes it: the share of the edges found that calibration never saw
/// change between runs of the same input, averaged over the clients, in percent; None before
/// any client reported. (LibAFL's own figure divides by the edges of the last calibrated
/// input's first run: a target whose unstable edges are few in all but many in one input
/// showed 0%.)
pub fn stability(stats: &ClientStatsManager) -> Option<f64> {
    let shares = stats.client_stats().values().filter_map(|c| {
        let number = |name| match c.get_user_stats(name).map(|s| s.value()) {
            Some(UserStatsValue::Number(n)) => Some(*n),
            Some(UserStatsValue::Ratio(hit, _)) => Some(*hit),
            _ => None,
        };
        let (found, unstable) = (number(EDGES_STAT)?, number(UNSTABLE_EDGES_STAT)?);
        (found > 0).then(|| found.saturating_sub(unstable) as f64 / found as f64)
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
