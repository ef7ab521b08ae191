//! Every fuzzer the bench runs, as tables: the suite's (ours in each mode against libFuzzer
//! and AFL++, on every target), the empty harness, the scaling runs and the magic harness.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
};

use harness_builder::LIBRARIES;
use lafuzz::Mode;

use crate::paths::Paths;

/// Where a binary is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `target/fuzzers/`: ours, built by `harness-builder`.
    Ours,
    /// `target/release/`: built by cargo.
    Release,
    /// `target/bench-build/`: built by the bench (`builds.rs`).
    Bench,
}

/// A binary: `PLACE/STEM SUFFIX`, where the stem is a target (`zlib`) or a one-file harness
/// (`magic`) and the suffix the build (`-libfuzzer`), so one table serves every target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bin {
    pub place: Place,
    pub stem: &'static str,
    pub suffix: &'static str,
}

impl Bin {
    pub const fn ours(stem: &'static str, suffix: &'static str) -> Self {
        Self {
            place: Place::Ours,
            stem,
            suffix,
        }
    }

    pub const fn bench(stem: &'static str, suffix: &'static str) -> Self {
        Self {
            place: Place::Bench,
            stem,
            suffix,
        }
    }

    pub fn name(self) -> String {
        format!("{}{}", self.stem, self.suffix)
    }

    pub fn path(self, p: &Paths) -> PathBuf {
        let dir = match self.place {
            // Quick runs build ours on the suite's libraries too (see `builds.rs`).
            Place::Ours if p.quick && LIBRARIES.iter().any(|l| l.name == self.stem) => &p.build,
            Place::Ours => &p.fuzzers,
            Place::Release => &p.release,
            Place::Bench => &p.build,
        };
        dir.join(self.name())
    }
}

/// Our out-of-process driver, which runs a standalone target.
const DRIVER: Bin = Bin {
    place: Place::Release,
    stem: "fuzzer",
    suffix: "",
};

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
    /// Ours: the separate comparison-tracing build (`--cmplog`).
    pub cmplog: Option<Bin>,
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
            cmplog: None,
        }
    }

    /// Ours with comparisons traced by a separate build (`--cmplog`), as AFL++'s `-c`.
    const fn traced_by(self, cmplog: Bin) -> Self {
        Self {
            cmplog: Some(cmplog),
            ..self
        }
    }

    const fn libfuzzer(binary: Bin) -> Self {
        Self {
            name: "libfuzzer",
            kind: Kind::LibFuzzer,
            binary,
            target: None,
            cmplog: None,
        }
    }

    /// afl-fuzz on `binary`; `file_arg`: it takes `@@`; `cmplog`: its CmpLog build.
    const fn afl(name: &'static str, binary: Bin, file_arg: bool, cmplog: Option<Bin>) -> Self {
        Self {
            name,
            kind: Kind::Afl { file_arg, cmplog },
            binary,
            target: None,
            cmplog: None,
        }
    }

    pub fn is_ours(&self) -> bool {
        matches!(self.kind, Kind::Ours(_))
    }

    pub fn needs_afl(&self) -> bool {
        matches!(self.kind, Kind::Afl { .. })
    }
}

/// The fuzzers run on every target of the suite, in the order of `--list`, of the runs and
/// of the summary: ours in each mode, and the peers built from the same sources and flags.
pub fn suite(target: &'static str) -> [Fuzzer; 11] {
    let ours = |suffix| Bin::ours(target, suffix);
    let bench = |suffix| Bin::bench(target, suffix);
    [
        Fuzzer::ours("ours-direct", Mode::Direct, ours("")),
        // The yardstick of what comparison logging costs (the speed goals at the top).
        Fuzzer::ours("ours-direct-nocmplog", Mode::Direct, ours("-nocmplog")),
        // As AFL++'s CmpLog setup: the fuzzed build without comparison logging, tracing by
        // the standalone build.
        Fuzzer::ours("ours-direct-split", Mode::Direct, ours("-nocmplog"))
            .traced_by(ours("-standalone")),
        Fuzzer::ours("ours-reset", Mode::Reset, ours("")),
        Fuzzer::ours("ours-fork", Mode::Fork, ours("")),
        Fuzzer::ours("ours-forkserver", Mode::Forkserver, ours("-standalone")),
        Fuzzer::ours("ours-persistent", Mode::Persistent, ours("-standalone")),
        Fuzzer::libfuzzer(bench("-libfuzzer")),
        Fuzzer::afl("aflpp-persistent", bench("-afl"), false, None),
        Fuzzer::afl(
            "aflpp-cmplog",
            bench("-afl"),
            false,
            Some(bench("-afl-cmplog")),
        ),
        Fuzzer::afl("aflpp-forkserver", bench("-afl-onefile"), true, None),
    ]
}

/// Ours' builds that the fuzzers named `names` run on `targets`.
pub fn ours_builds(targets: &[&'static str], names: &[&str]) -> Vec<Bin> {
    let mut bins: Vec<Bin> = Vec::new();
    let used = targets
        .iter()
        .flat_map(|&target| suite(target))
        .filter(|f| names.contains(&f.name))
        .flat_map(|f| [Some(f.binary), f.target, f.cmplog])
        .flatten();
    for bin in used.filter(|b| b.place == Place::Ours) {
        if !bins.contains(&bin) {
            bins.push(bin);
        }
    }
    bins
}

/// The names of `suite`'s fuzzers.
pub fn suite_names() -> Vec<&'static str> {
    suite("-").iter().map(|f| f.name).collect()
}

/// The bug benchmark's fuzzers, each on its AddressSanitizer build of `target`: ours, and the
/// best setup of each peer (AFL++ with CmpLog; libFuzzer as FuzzBench runs it for bugs).
pub fn bug_fuzzers(target: &'static str) -> [Fuzzer; 3] {
    let asan = |suffix| Bin::bench(target, suffix);
    [
        Fuzzer::ours("ours-direct", Mode::Direct, asan("-ours-asan")),
        Fuzzer::libfuzzer(asan("-libfuzzer-asan")),
        Fuzzer::afl(
            "aflpp-cmplog",
            asan("-afl-cmplog-asan"),
            false,
            Some(asan("-afl-cmplog-asan")),
        ),
    ]
}

/// The build that judges every fuzzer's crashes on a bug target (a plain libFuzzer binary
/// runs the file it is given once).
pub fn bug_judge(target: &'static str) -> Bin {
    Bin::bench(target, "-libfuzzer-asan")
}

/// Engine overhead: each engine on a harness that does nothing.
pub const EMPTY: &[Fuzzer] = &[
    Fuzzer::ours("ours-direct", Mode::Direct, Bin::bench("empty", "-lafuzz")),
    Fuzzer::libfuzzer(Bin::bench("empty", "-libfuzzer")),
    Fuzzer::afl("aflpp-persistent", Bin::bench("empty", "-afl"), false, None),
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
        fuzzer: Fuzzer::ours(
            "ours-direct-all-cores",
            Mode::Direct,
            Bin::ours("libpng", ""),
        ),
        dir: "scaling-all",
        pinned: false,
    },
    Scaling {
        fuzzer: Fuzzer::ours("ours-direct-1-core", Mode::Direct, Bin::ours("libpng", "")),
        dir: "scaling-one",
        pinned: true,
    },
];

/// Comparison solving: time to the magic harness's crash.
pub const MAGIC: &[Fuzzer] = &[
    Fuzzer::ours("ours-direct", Mode::Direct, Bin::ours("magic", "")),
    Fuzzer::ours(
        "ours-direct-split",
        Mode::Direct,
        Bin::ours("magic", "-nocmplog"),
    )
    .traced_by(Bin::ours("magic", "-standalone")),
    Fuzzer::libfuzzer(Bin::bench("magic", "-libfuzzer")),
    Fuzzer::afl(
        "aflpp-cmplog",
        Bin::bench("magic", "-afl"),
        false,
        Some(Bin::bench("magic", "-afl-cmplog")),
    ),
];

/// Whether `name` is one of ours in the tables above: for runs read back from `results.csv`,
/// which names the fuzzer only.
pub fn is_ours(name: &str) -> bool {
    suite("-")
        .iter()
        .chain(EMPTY)
        .chain(SCALING.iter().map(|s| &s.fuzzer))
        .chain(MAGIC)
        .any(|f| f.name == name && f.is_ours())
}

pub fn afl_available() -> bool {
    Command::new("afl-fuzz")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ours_builds_are_those_the_chosen_fuzzers_run() {
        let names = |bins: Vec<Bin>| bins.iter().map(|b| b.name()).collect::<Vec<_>>();
        let per_build = ours_builds(&["zlib", "zstd"], &["ours-direct", "ours-persistent"]);
        assert_eq!(
            names(per_build),
            ["zlib", "zlib-standalone", "zstd", "zstd-standalone"]
        );
        // The split setup traces with the standalone build; the peers are no builds of ours.
        let split = ours_builds(&["zlib"], &["ours-direct-split", "libfuzzer"]);
        assert_eq!(names(split), ["zlib-nocmplog", "zlib-standalone"]);
    }
}
