//! Every fuzzer the bench runs, as tables: the libpng table (ours in each mode against
//! libFuzzer and AFL++), the empty harness, the scaling runs and the magic harness.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
};

use crate::{mode::Mode, paths::Paths};

/// A binary, by the directory it is built into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    /// `target/fuzzers/NAME`: ours, built by `harness-builder`.
    Ours(&'static str),
    /// `target/release/NAME`: built by cargo.
    Release(&'static str),
    /// `target/bench-build/NAME`: built by the bench (`builds.rs`).
    Bench(&'static str),
}

impl Bin {
    pub fn path(self, p: &Paths) -> PathBuf {
        match self {
            Self::Ours(name) => p.fuzzers.join(name),
            Self::Release(name) => p.release.join(name),
            Self::Bench(name) => p.bin(name),
        }
    }
}

/// Our out-of-process driver, which runs a standalone target.
const DRIVER: Bin = Bin::Release("fuzzer");

/// How a fuzzer is started and where it leaves its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Ours: `BINARY fuzz --mode MODE ... [-- TARGET [@@]]`.
    Ours(Mode),
    LibFuzzer,
    /// afl-fuzz; `file_arg`: the target takes `@@`; `cmplog`: its CmpLog build (`-c`).
    Afl {
        file_arg: bool,
        cmplog: Option<Bin>,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct Fuzzer {
    pub name: &'static str,
    pub kind: Kind,
    /// The fuzzer binary (ours, libFuzzer) or the target (AFL++).
    pub binary: Bin,
    /// Ours out of process: the standalone target.
    pub target: Option<Bin>,
}

impl Fuzzer {
    /// Ours in `mode`; `runs`: the fuzzer with the harness linked in, or, in a mode that runs
    /// a standalone target, that target (our driver is then the binary).
    const fn ours(name: &'static str, mode: Mode, runs: Bin) -> Self {
        let (binary, target) = if mode.runs_standalone_target() {
            (DRIVER, Some(runs))
        } else {
            (runs, None)
        };
        Self {
            name,
            kind: Kind::Ours(mode),
            binary,
            target,
        }
    }

    const fn libfuzzer(binary: Bin) -> Self {
        Self {
            name: "libfuzzer",
            kind: Kind::LibFuzzer,
            binary,
            target: None,
        }
    }

    /// afl-fuzz on `binary`; `file_arg`: it takes `@@`; `cmplog`: its CmpLog build.
    const fn afl(name: &'static str, binary: Bin, file_arg: bool, cmplog: Option<Bin>) -> Self {
        Self {
            name,
            kind: Kind::Afl { file_arg, cmplog },
            binary,
            target: None,
        }
    }

    pub fn is_ours(&self) -> bool {
        matches!(self.kind, Kind::Ours(_))
    }

    pub fn needs_afl(&self) -> bool {
        matches!(self.kind, Kind::Afl { .. })
    }
}

/// The libpng table, in the order of `--list`, of the runs and of the summary.
pub const LIBPNG: &[Fuzzer] = &[
    Fuzzer::ours("ours-direct", Mode::Direct, Bin::Ours("libpng")),
    // The yardstick of what comparison logging costs (the speed goals at the top).
    Fuzzer::ours(
        "ours-direct-nocmplog",
        Mode::Direct,
        Bin::Ours("libpng-nocmplog"),
    ),
    Fuzzer::ours("ours-reset", Mode::Reset, Bin::Ours("libpng")),
    Fuzzer::ours("ours-fork", Mode::Fork, Bin::Ours("libpng")),
    Fuzzer::ours(
        "ours-forkserver",
        Mode::Forkserver,
        Bin::Ours("libpng-standalone"),
    ),
    Fuzzer::ours(
        "ours-persistent",
        Mode::Persistent,
        Bin::Ours("libpng-standalone"),
    ),
    Fuzzer::libfuzzer(Bin::Bench("libpng-libfuzzer")),
    Fuzzer::afl("aflpp-persistent", Bin::Bench("libpng-afl"), false, None),
    Fuzzer::afl(
        "aflpp-forkserver",
        Bin::Bench("libpng-afl-onefile"),
        true,
        None,
    ),
];

/// Engine overhead: each engine on a harness that does nothing.
pub const EMPTY: &[Fuzzer] = &[
    Fuzzer::ours("ours-direct", Mode::Direct, Bin::Bench("empty-lafuzz")),
    Fuzzer::libfuzzer(Bin::Bench("empty-libfuzzer")),
    Fuzzer::afl("aflpp-persistent", Bin::Bench("empty-afl"), false, None),
];

/// One scaling run of ours on libpng: its name, its work directory, pinned to the bench's
/// core or not (then on all cores).
pub struct Scaling {
    pub fuzzer: Fuzzer,
    pub dir: &'static str,
    pub pinned: bool,
}

pub const SCALING: &[Scaling] = &[
    Scaling {
        fuzzer: Fuzzer::ours("ours-direct-all-cores", Mode::Direct, Bin::Ours("libpng")),
        dir: "scaling-all",
        pinned: false,
    },
    Scaling {
        fuzzer: Fuzzer::ours("ours-direct-1-core", Mode::Direct, Bin::Ours("libpng")),
        dir: "scaling-one",
        pinned: true,
    },
];

/// Comparison solving: time to the magic harness's crash.
pub const MAGIC: &[Fuzzer] = &[
    Fuzzer::ours("ours-direct", Mode::Direct, Bin::Ours("magic")),
    Fuzzer::libfuzzer(Bin::Bench("magic-libfuzzer")),
    Fuzzer::afl(
        "aflpp-cmplog",
        Bin::Bench("magic-afl"),
        false,
        Some(Bin::Bench("magic-afl-cmplog")),
    ),
];

pub fn afl_available() -> bool {
    Command::new("afl-fuzz")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}
