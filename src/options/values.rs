//! Value parsers for clap: each turns one argument into its typed value, or says in one
//! clause why it cannot (clap adds the flag and the value, see `one_line`).

use std::{
    net::{SocketAddr, ToSocketAddrs},
    time::Duration,
};

use libafl_bolts::core_affinity::{get_core_ids, Cores};

use crate::platform::errors::error_text;

/// The memory limit, in MiB, of every command that runs inputs (libFuzzer's `-rss_limit_mb`
/// default): one value, so a finding's `replay` line can leave it out where the campaign used it.
pub const DEFAULT_RSS_LIMIT_MB: u64 = 2048;

/// `--cores`: `0-7`, `0,2,4` or `all`, every core existing on this machine.
pub fn parse_cores(list: &str) -> Result<Cores, String> {
    let cores = Cores::from_cmdline(list).map_err(|e| error_text(&e))?;
    let available = get_core_ids().map_err(|e| error_text(&e))?;
    if cores.ids.is_empty() {
        return Err("no cores listed".into());
    }
    if let Some(missing) = cores.ids.iter().find(|id| !available.contains(id)) {
        return Err(format!(
            "core {} does not exist (this machine has {})",
            missing.0,
            available.len()
        ));
    }
    Ok(cores)
}

/// A time in milliseconds, at least 1.
pub fn parse_millis(text: &str) -> Result<Duration, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1 ms".into()),
        Ok(ms) => Ok(Duration::from_millis(ms)),
        Err(e) => Err(format!("not a number of milliseconds: {e}")),
    }
}

/// A time in seconds.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<u64>()
        .map(Duration::from_secs)
        .map_err(|e| format!("not a number of seconds: {e}"))
}

/// `HOST:PORT`, resolved now (reachability is checked when the campaign starts).
pub fn parse_broker_address(text: &str) -> Result<SocketAddr, String> {
    text.to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| "no address".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_accept_ranges_and_all() {
        assert_eq!(parse_cores("0").unwrap().ids.len(), 1);
        assert!(!parse_cores("all").unwrap().ids.is_empty());
    }

    #[test]
    fn cores_reject_garbage_and_missing_cores() {
        assert!(parse_cores("abc").is_err());
        assert!(parse_cores("9999").unwrap_err().contains("does not exist"));
    }

    #[test]
    fn times_and_addresses() {
        assert_eq!(parse_millis("250"), Ok(Duration::from_millis(250)));
        assert!(parse_millis("0").is_err() && parse_millis("x").is_err());
        assert_eq!(parse_seconds("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_broker_address("127.0.0.1:7000").unwrap().port(), 7000);
        assert!(parse_broker_address("nohostport").is_err());
    }
}
