//! The `log` crate's messages on stderr, one line each: ours from warnings up (`lafuzz:
//! warning: ...`), LibAFL's and other crates' errors only (their warnings are about their own
//! workings, not the user's campaign). Without a logger, `log::warn!` prints nothing.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct StderrLogger;

static LOGGER: StderrLogger = StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        let ours = metadata.target().starts_with("lafuzz");
        metadata.level() <= if ours { Level::Warn } else { Level::Error }
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            let level = match record.level() {
                Level::Error => "error",
                _ => "warning",
            };
            eprintln!("lafuzz: {level}: {}", record.args());
        }
    }

    fn flush(&self) {}
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
}
