//! Our execution modes, as the bench runs them.

/// One of ours' `--mode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In-process.
    Direct,
    /// In-process, reset after every input and restarted every so many.
    Reset,
    /// A fresh forked child per input.
    Fork,
    /// A standalone target, one fork of its fork server per input.
    Forkserver,
    /// A standalone target, many inputs per child (shared-memory testcases).
    Persistent,
}

impl Mode {
    /// The value of `fuzz --mode`.
    pub const fn arg(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Reset => "reset",
            Self::Fork => "fork",
            Self::Forkserver => "forkserver",
            Self::Persistent => "persistent",
        }
    }

    /// Out of process: our driver (`target/release/fuzzer`) runs a standalone target given
    /// after `--`, instead of the harness linked into the fuzzer binary.
    pub const fn runs_standalone_target(self) -> bool {
        matches!(self, Self::Forkserver | Self::Persistent)
    }

    /// The standalone target reads its input from a file named on its command line (`@@`);
    /// in persistent mode it gets the input through shared memory.
    pub const fn target_reads_file(self) -> bool {
        matches!(self, Self::Forkserver)
    }
}
