//! Frames a standalone target printed as `(MODULE+0xOFFSET)` (its runtime's stack printer has
//! only the exported names, `compiler-wrapper/runtime/stack.c`) get their function and
//! `file:line:col` from the llvm-symbolizer the fuzzer was built with, one run per module.

use std::{collections::BTreeMap, ffi::CStr, process::Command};

use super::description::Frame;

extern "C" {
    fn lafuzz_symbolizer_path() -> *const libc::c_char;
}

fn symbolizer() -> Option<String> {
    // SAFETY: our C shim returns NULL or a pointer to a string literal.
    let path = unsafe { lafuzz_symbolizer_path() };
    // SAFETY: non-null: a NUL-terminated literal that lives as long as the program.
    (!path.is_null()).then(|| {
        unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned()
    })
}

/// `(MODULE+0xOFFSET)` as (module, offset).
fn module_offset(location: &str) -> Option<(&str, &str)> {
    let inner = location.strip_prefix('(')?.strip_suffix(')')?;
    let (module, offset) = inner.rsplit_once('+')?;
    offset.starts_with("0x").then_some((module, offset))
}

/// Fills in what the symbolizer knows of the frames given by module and offset; the others,
/// and all of them without a symbolizer, stay as they are.
pub fn symbolize(frames: &mut [Frame]) {
    let mut by_module: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, frame) in frames.iter().enumerate() {
        if let Some((module, _)) = module_offset(&frame.location) {
            by_module.entry(module.to_string()).or_default().push(i);
        }
    }
    let Some(tool) = symbolizer().filter(|_| !by_module.is_empty()) else {
        return;
    };
    for (module, indices) in by_module {
        let offsets: Vec<String> = indices
            .iter()
            .filter_map(|&i| module_offset(&frames[i].location).map(|(_, o)| o.to_string()))
            .collect();
        let Ok(output) = Command::new(&tool)
            .args(["--no-inlines", "--relative-address", "--obj"])
            .arg(&module)
            .args(&offsets)
            .output()
        else {
            return;
        };
        let text = String::from_utf8_lossy(&output.stdout);
        // Per address: the function, then `file:line:col`, then an empty line.
        let answers = text.split("\n\n").filter(|a| !a.trim().is_empty());
        for (&i, answer) in indices.iter().zip(answers) {
            let mut lines = answer.lines();
            let (Some(function), Some(location)) = (lines.next(), lines.next()) else {
                continue;
            };
            if function != "??" {
                frames[i].function = function.to_string();
            }
            if !location.starts_with("??") {
                frames[i].location = location.to_string();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_and_offset_are_read_from_the_location() {
        assert_eq!(module_offset("(/a/b.so+0x1f)"), Some(("/a/b.so", "0x1f")));
        assert_eq!(module_offset("/src/x.c:3:4"), None);
        assert_eq!(module_offset("(??)"), None);
    }
}
