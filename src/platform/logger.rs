//! The `log` crate's messages on stderr, one line each: ours from warnings up (`lafuzz:
//! warning: ...`), LibAFL's and other crates' errors only (their warnings are about their own
//! workings, not the user's campaign). Without a logger, `log::warn!` prints nothing.
//!
//! LLMP's listener logs an error and goes on when one connection's handshake fails: that
//! happens when a client dies while it connects, which the supervisor reports in its own words
//! (and stops the campaign for, if it repeats). Those lines are dropped, so the one error a user
//! sees is ours.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct StderrLogger;

static LOGGER: StderrLogger = StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        let ours = metadata.target().starts_with("lafuzz");
        metadata.level() <= if ours { Level::Warn } else { Level::Error }
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) && !is_recovered_handshake(record) {
            let level = match record.level() {
                Level::Error => "error",
                _ => "warning",
            };
            eprintln!("lafuzz: {level}: {}", record.args());
        }
    }

    fn flush(&self) {}
}

/// The openings of `ll_mp`'s listener errors after which it `continue`s with the next
/// connection (ll_mp 0.16.1, `LlmpBroker::launch_tcp_listener`).
const RECOVERED_HANDSHAKE: [&str; 3] = [
    "Error sending initial hello",
    "Error receving from tcp",
    "Could not deserialize tcp message",
];

fn is_recovered_handshake(record: &Record) -> bool {
    record.target().starts_with("ll_mp") && {
        let text = record.args().to_string();
        RECOVERED_HANDSHAKE
            .iter()
            .any(|opening| text.starts_with(opening))
    }
}

/// Installs the logger once per process (later calls keep the first).
pub fn install() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(LevelFilter::Warn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_warnings_and_everyones_errors_are_printed() {
        let enabled = |target: &str, level| {
            LOGGER.enabled(&Metadata::builder().target(target).level(level).build())
        };
        assert!(enabled("lafuzz::target::harness", Level::Warn));
        assert!(!enabled("lafuzz::engine", Level::Info));
        assert!(!enabled("libafl::stages", Level::Warn));
        assert!(enabled("libafl_bolts::llmp", Level::Error));
    }

    #[test]
    fn only_llmp_handshake_errors_it_recovers_from_are_dropped() {
        let dropped = |target: &str, text: std::fmt::Arguments| {
            is_recovered_handshake(&Record::builder().target(target).args(text).build())
        };
        assert!(dropped(
            "ll_mp",
            format_args!("Error receving from tcp: {}", 104)
        ));
        assert!(!dropped(
            "ll_mp",
            format_args!("Fatal accept error on listener")
        ));
        assert!(!dropped(
            "lafuzz::campaign",
            format_args!("Error receving from tcp")
        ));
    }
}
