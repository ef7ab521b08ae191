//! The bug benchmark: libraries in old releases, from older versions of the crates.io crates
//! that bundle them (pinned by `bench/bugs/Cargo.lock`), with real bugs that upstream fixed
//! later, each named with its fix and recognised by an oracle independent of any fuzzer.

use std::path::{Path, PathBuf};

use crate::{
    suite::{ONIGURUMA, STB_IMAGE},
    Library,
};

/// The libraries of the bug benchmark, compiled with AddressSanitizer for every fuzzer.
pub const BUG_TARGETS: &[Library] = &[
    Library {
        lock: "bench/bugs",
        // Old code: its warnings are not ours to fix.
        defines: &["-w"],
        ..ONIGURUMA
    },
    Library {
        lock: "bench/bugs",
        // Release builds: the library's own asserts off, as an application ships it.
        defines: &["-DNDEBUG", "-w"],
        ..STB_IMAGE
    },
    Library {
        name: "expat",
        krate: "expat-sys",
        lock: "bench/bugs",
        dir: "expat/lib",
        sources: &["xmlparse.c", "xmlrole.c", "xmltok.c"],
        includes: &["."],
        // What Expat's configure defines on Linux x86-64.
        defines: &[
            "-DHAVE_MEMMOVE",
            "-DXML_NS",
            "-DXML_DTD",
            "-DXML_CONTEXT_BYTES=1024",
            "-DBYTEORDER=1234",
            "-w",
        ],
        config: None,
        harness: "harnesses/expat/xml_parse_fuzzer.c",
        libs: &[],
    },
];

/// What a sanitizer report of the bug says: its kind (`heap-buffer-overflow`, `SEGV`,
/// `memory leak`; `buffer-overflow` for any buffer's, where the overflowed buffer depends on
/// the input) and the top frames of the library's own code, innermost first.
#[derive(Debug, Clone, Copy)]
pub struct Oracle {
    pub kind: &'static str,
    pub frames: &'static [&'static str],
}

/// The kind of a LeakSanitizer report, as oracles and the bench's report parser name it.
pub const LEAK: &str = "memory leak";

/// An oracle: `kind` and the top `frames`.
pub const fn oracle(kind: &'static str, frames: &'static [&'static str]) -> Oracle {
    Oracle { kind, frames }
}

/// One real bug of a bug target.
#[derive(Debug, Clone, Copy)]
pub struct Bug {
    /// Short and stable: `ONIG-1`.
    pub id: &'static str,
    /// The [`BUG_TARGETS`] library it is in.
    pub target: &'static str,
    /// What goes wrong, in a few words.
    pub what: &'static str,
    /// The upstream fix: commit (and CVE where there is one).
    pub fix: &'static str,
    /// What its sanitizer reports look like: any one of these (a memory corruption can show
    /// where it happens or where the corrupted memory is used next).
    pub oracles: &'static [Oracle],
}

impl Bug {
    /// Its known reproducer, `bench/bugs/reproducers/ID` (a few bytes).
    pub fn reproducer(&self, root: &Path) -> PathBuf {
        root.join("bench/bugs/reproducers").join(self.id)
    }

    /// Whether every report of it is a leak (which LeakSanitizer alone sees).
    pub fn is_leak(&self) -> bool {
        self.oracles.iter().all(|o| o.kind == LEAK)
    }

    /// The target library it is in.
    pub fn library(&self) -> &'static Library {
        BUG_TARGETS
            .iter()
            .find(|l| l.name == self.target)
            .expect("every bug's target is in BUG_TARGETS")
    }
}

const fn bug(
    id: &'static str,
    target: &'static str,
    what: &'static str,
    fix: &'static str,
    oracles: &'static [Oracle],
) -> Bug {
    Bug {
        id,
        target,
        what,
        fix,
        oracles,
    }
}

/// Every bug of the benchmark.
pub const BUGS: &[Bug] = &[
    bug(
        "ONIG-1",
        "oniguruma",
        "an octal escape above \\377 in a character class sets a bit past the class's bitset",
        "kkos/oniguruma b4bf968ad52afe14e60a2dc8a95d3555c543353a (6.3.0, CVE-2017-9226)",
        &[
            oracle("buffer-overflow", &["next_state_val"]),
            // The stray bit lands on the class's buffer pointer, used next by these.
            oracle("SEGV", &["bbuf_free"]),
            oracle("SEGV", &["add_multi_byte_cclass"]),
        ],
    ),
    bug(
        "ONIG-2",
        "oniguruma",
        "a forward search starts past the subject's end by the pattern's minimum length",
        "kkos/oniguruma 9690d3ab1f9bcd2db8cbe1fe3ee4a5da606b8814 (6.3.0, CVE-2017-9227)",
        &[oracle(
            "buffer-overflow",
            &["mbc_enc_len", "forward_search_range"],
        )],
    ),
    bug(
        "ONIG-3",
        "oniguruma",
        "the backtracking stack, doubled, copies more than the old stack holds",
        "kkos/oniguruma 0bd2887ba0f02cc66a75adfdabc40b9063ddf188 (6.2.0, pull request #51)",
        &[oracle("dynamic-stack-buffer-overflow", &["stack_double"])],
    ),
    bug(
        "ONIG-4",
        "oniguruma",
        "a multi-byte character class reads a character past the subject's end",
        "kkos/oniguruma 6d248fe906a50ed58d8a4eacf5c5ba7f65685ddf (6.9.3)",
        &[oracle(
            "buffer-overflow",
            &["utf16le_mbc_enc_len", "match_at"],
        )],
    ),
    bug(
        "STB-1",
        "stb_image",
        "a corrupt HDR image fails to load after its size is set, and the float-to-byte \
         conversion reads the missing pixels",
        "nothings/stb 02190634c2ff6e3b68fcd99b84cf4acabb70ea2e (2.13)",
        &[oracle("SEGV", &["stbi__hdr_to_ldr"])],
    ),
    bug(
        "STB-2",
        "stb_image",
        "a progressive JPEG's DC coefficient of more than 15 bits indexes past the bit masks",
        "nothings/stb a3f2897b85760d1e98fedbe31fcf2ddf089c169e (2.27, CVE-2021-28021)",
        &[oracle("buffer-overflow", &["stbi__extend_receive"])],
    ),
    bug(
        "STB-3",
        "stb_image",
        "a BMP's width times height times 4 overflows int, and the pixels overrun the buffer",
        "nothings/stb 02190634c2ff6e3b68fcd99b84cf4acabb70ea2e (2.13, issue #313)",
        &[oracle("buffer-overflow", &["stbi__bmp_load"])],
    ),
    bug(
        "STB-4",
        "stb_image",
        "a TGA's palette index is scaled by the index width, not the palette entry's size",
        "nothings/stb d23504932293f7a7b8bb13eae033eff5a03a68df (2.09)",
        &[oracle("buffer-overflow", &["stbi__tga_load"])],
    ),
    bug(
        "EXPAT-1",
        "expat",
        "an element with an unbound prefix that declares a namespace leaks the binding",
        "libexpat b47dbc9745932c160893d433220e462bd605f8cd (2.2.1, issue #17, found by OSS-Fuzz)",
        &[oracle(LEAK, &["addBinding"])],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_has_a_target_a_unique_id_and_a_reproducer() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (i, b) in BUGS.iter().enumerate() {
            assert_eq!(b.library().name, b.target);
            assert!(BUGS[..i].iter().all(|o| o.id != b.id), "{} twice", b.id);
            assert!(b.reproducer(&root).is_file(), "{} has no reproducer", b.id);
        }
    }
}
