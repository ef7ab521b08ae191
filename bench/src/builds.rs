//! Builds every peer from the same sources and flags (-O2): libpng (from the `libpng-src`
//! crate) with libFuzzer, AFL++, a coverage build and a plain build; the empty and the magic
//! harnesses. Ours come from `cargo make build` (`target/fuzzers/`).

use std::{fs, path::PathBuf};

use crate::{
    flavor::{run, s, Flavor, AFL, AFL_CMPLOG, COVERAGE, LIBFUZZER, PLAIN},
    paths::Paths,
};

/// What goes into a link.
#[derive(Debug, Clone, Copy)]
enum Input {
    /// The libpng harness, compiled in the build's flavor.
    LibpngHarness,
    /// libpng as a static library, compiled in the build's flavor.
    Libpng,
    /// A one-file C source (a `bench/c/` helper or a harness), relative to the repository root.
    C(&'static str),
}

enum Recipe {
    /// `inputs` compiled in `flavor` and linked with its C++ driver; `link_flags` decide the
    /// main.
    Link {
        flavor: &'static Flavor,
        inputs: &'static [Input],
        link_flags: &'static [&'static str],
    },
    /// One C file through our compiler wrapper (`libafl_cc -O2`).
    Ours(&'static str),
}

/// One binary in `target/bench-build/`.
struct Build {
    name: &'static str,
    recipe: Recipe,
}

/// The fuzzer's own main: libFuzzer's, or with AFL++'s compilers its persistent-mode driver.
const FUZZER_MAIN: &[&str] = &["-fsanitize=fuzzer"];
const MAGIC: &str = "harnesses/magic/magic.c";
const EMPTY: &str = "bench/c/empty.c";

const fn link(
    name: &'static str,
    flavor: &'static Flavor,
    inputs: &'static [Input],
    link_flags: &'static [&'static str],
) -> Build {
    Build {
        name,
        recipe: Recipe::Link {
            flavor,
            inputs,
            link_flags,
        },
    }
}

/// Everything the bench runs that is not ours, in build order.
const BUILDS: &[Build] = &[
    link(
        "libpng-libfuzzer",
        &LIBFUZZER,
        &[Input::LibpngHarness, Input::Libpng],
        FUZZER_MAIN,
    ),
    // Replays a list of inputs, for coverage.
    link(
        "libpng-cov",
        &COVERAGE,
        &[
            Input::LibpngHarness,
            Input::C("bench/c/replay_main.c"),
            Input::Libpng,
        ],
        &[],
    ),
    link(
        "libpng-bare",
        &PLAIN,
        &[
            Input::LibpngHarness,
            Input::C("bench/c/bare_loop.c"),
            Input::Libpng,
        ],
        &[],
    ),
    link(
        "empty-libfuzzer",
        &LIBFUZZER,
        &[Input::C(EMPTY)],
        FUZZER_MAIN,
    ),
    Build {
        name: "empty-lafuzz",
        recipe: Recipe::Ours(EMPTY),
    },
    link(
        "magic-libfuzzer",
        &LIBFUZZER,
        &[Input::C(MAGIC)],
        FUZZER_MAIN,
    ),
    link(
        "libpng-afl",
        &AFL,
        &[Input::LibpngHarness, Input::Libpng],
        FUZZER_MAIN,
    ),
    // One input file per run (`@@`): AFL++'s fork server without its persistent loop.
    link(
        "libpng-afl-onefile",
        &AFL,
        &[
            Input::LibpngHarness,
            Input::C("bench/c/onefile_main.c"),
            Input::Libpng,
        ],
        &[],
    ),
    link("empty-afl", &AFL, &[Input::C(EMPTY)], FUZZER_MAIN),
    link("magic-afl", &AFL, &[Input::C(MAGIC)], FUZZER_MAIN),
    link(
        "magic-afl-cmplog",
        &AFL_CMPLOG,
        &[Input::C(MAGIC)],
        FUZZER_MAIN,
    ),
];

impl Build {
    fn needs_afl(&self) -> bool {
        match self.recipe {
            Recipe::Link { flavor, .. } => flavor.needs_afl,
            Recipe::Ours(_) => false,
        }
    }

    fn build(&self, p: &Paths) -> Result<(), String> {
        let out = p.bin(self.name);
        match self.recipe {
            Recipe::Link {
                flavor,
                inputs,
                link_flags,
            } => {
                let objects = inputs
                    .iter()
                    .map(|input| match input {
                        Input::LibpngHarness => flavor.libpng_harness(p),
                        Input::Libpng => flavor.libpng(p),
                        Input::C(source) => flavor.helper(p, &p.root.join(source)),
                    })
                    .collect::<Result<Vec<PathBuf>, String>>()?;
                flavor.link(&objects, link_flags, &out)
            }
            Recipe::Ours(source) => run(
                &s(&p.release.join("libafl_cc")),
                &["-O2".into(), s(&p.root.join(source)), "-o".into(), s(&out)],
                &[],
            ),
        }
    }

    /// Ours links our runtime: rebuilt whenever the runtime is newer (a stale one would
    /// measure old code); the peers' builds never change.
    fn is_current(&self, p: &Paths, out: &std::path::Path) -> bool {
        let modified = |path: &std::path::Path| fs::metadata(path).and_then(|m| m.modified()).ok();
        match self.recipe {
            Recipe::Link { .. } => out.exists(),
            Recipe::Ours(_) => match (modified(out), modified(&p.release.join("liblafuzz.a"))) {
                (Some(built), Some(runtime)) => built >= runtime,
                _ => false,
            },
        }
    }
}

/// Builds each of `BUILDS` that is missing or stale (those with AFL++ only if `with_afl`).
pub fn build_all(p: &Paths, with_afl: bool) -> Result<(), String> {
    fs::create_dir_all(&p.build).map_err(|e| e.to_string())?;
    for b in BUILDS.iter().filter(|b| with_afl || !b.needs_afl()) {
        let out = p.bin(b.name);
        if b.is_current(p, &out) {
            continue;
        }
        println!("bench: building {}", out.display());
        b.build(p)?;
    }
    Ok(())
}
