//! The ready-to-paste command that reproduces a saved input, printed after each new finding.

use std::path::Path;

use crate::options::DEFAULT_RSS_LIMIT_MB;

/// How a user reproduces a saved input.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Reproduce {
    /// This fuzzer binary's `replay` command, under the campaign's memory limits (its flags
    /// from [`replay_memory_args`]): an out-of-memory input is one only under them.
    Replay {
        exe: String,
        memory_args: Vec<String>,
    },
    /// The standalone target's own command line (`@@` is the input file, else stdin).
    Target { command: Vec<String> },
}

impl Reproduce {
    /// `replay` of this binary; `memory_args`: see [`replay_memory_args`].
    pub fn for_this_binary(memory_args: Vec<String>) -> Self {
        // Where /proc is not mounted, the name it was started by.
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .ok()
            .or_else(|| std::env::args().next())
            .unwrap_or_else(|| "fuzzer".into());
        Self::Replay { exe, memory_args }
    }

    /// The command to paste; `sequence`: the file is a flaky crash's sequence directory.
    pub fn command(&self, file: &Path, sequence: bool) -> String {
        let file = file.display().to_string();
        let words: Vec<String> = match self {
            Self::Replay { exe, memory_args } => {
                let mut words = vec![quote(exe), "replay".into()];
                words.extend(memory_args.iter().cloned());
                if sequence {
                    words.push("--sequence".into());
                }
                words.push(quote(&file));
                words
            }
            Self::Target { command } if command.iter().any(|a| a == "@@") => command
                .iter()
                .map(|a| quote(if a == "@@" { &file } else { a }))
                .collect(),
            Self::Target { command } => {
                let mut words: Vec<String> = command.iter().map(|a| quote(a)).collect();
                words.push(format!("< {}", quote(&file)));
                words
            }
        };
        words.join(" ")
    }

    /// The command that shrinks a saved crash (in-process builds: `minimize`).
    pub fn minimize_command(&self, file: &Path) -> Option<String> {
        let Self::Replay { exe, .. } = self else {
            return None;
        };
        let file = file.display().to_string();
        Some(format!(
            "{} minimize {} -o {}",
            quote(exe),
            quote(&file),
            quote(&format!("{file}.min"))
        ))
    }

    /// The lines a finding's description ends with: how to reproduce it, and to minimize it
    /// when `minimizable` (a crash or an out-of-memory input: what `minimize` shrinks).
    pub fn described(&self, file: &Path, minimizable: bool) -> String {
        let mut text = format!("reproduce: {}\n", self.command(file, false));
        if let Some(minimize) = self.minimize_command(file).filter(|_| minimizable) {
            text += &format!("minimize: {minimize}\n");
        }
        text
    }
}

/// `replay`'s flags for a campaign's memory limits, as its findings are run again: each only
/// where it is not replay's default (the RSS limit [`DEFAULT_RSS_LIMIT_MB`], the malloc limit
/// the RSS limit).
pub fn replay_memory_args(rss_limit_mb: u64, malloc_limit_mb: Option<u64>) -> Vec<String> {
    let mut args = Vec::new();
    if rss_limit_mb != DEFAULT_RSS_LIMIT_MB {
        args.extend(["--rss-limit-mb".to_string(), rss_limit_mb.to_string()]);
    }
    if let Some(mb) = malloc_limit_mb.filter(|&mb| mb != rss_limit_mb) {
        args.extend(["--malloc-limit-mb".to_string(), mb.to_string()]);
    }
    args
}

/// A word for a POSIX shell: as is when it holds only safe characters, else single-quoted.
fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduce_commands_are_ready_to_paste() {
        let file = Path::new("out/crashes/abc");
        let replay = Reproduce::Replay {
            exe: "./fz".into(),
            memory_args: Vec::new(),
        };
        assert_eq!(replay.command(file, false), "./fz replay out/crashes/abc");
        assert_eq!(
            replay.command(file, true),
            "./fz replay --sequence out/crashes/abc"
        );
        // A campaign's own memory limits go with every finding's command.
        let limited = Reproduce::Replay {
            exe: "./fz".into(),
            memory_args: replay_memory_args(512, Some(32)),
        };
        assert_eq!(
            limited.command(file, false),
            "./fz replay --rss-limit-mb 512 --malloc-limit-mb 32 out/crashes/abc"
        );
        assert!(limited
            .described(file, true)
            .contains("reproduce: ./fz replay --rss-limit-mb 512 --malloc-limit-mb 32 out/"));
        let with_file = Reproduce::Target {
            command: vec!["./t".into(), "-x".into(), "@@".into()],
        };
        assert_eq!(with_file.command(file, false), "./t -x out/crashes/abc");
        let with_stdin = Reproduce::Target {
            command: vec!["./t".into()],
        };
        assert_eq!(with_stdin.command(file, false), "./t < out/crashes/abc");
    }

    #[test]
    fn the_malloc_limit_is_passed_to_replay_only_apart_from_the_rss_limit() {
        let args = |rss, malloc| replay_memory_args(rss, malloc).join(" ");
        assert_eq!(args(DEFAULT_RSS_LIMIT_MB, None), "");
        assert_eq!(args(DEFAULT_RSS_LIMIT_MB, Some(DEFAULT_RSS_LIMIT_MB)), "");
        assert_eq!(args(512, None), "--rss-limit-mb 512");
        assert_eq!(args(512, Some(512)), "--rss-limit-mb 512");
        assert_eq!(args(DEFAULT_RSS_LIMIT_MB, Some(32)), "--malloc-limit-mb 32");
        assert_eq!(
            args(512, Some(32)),
            "--rss-limit-mb 512 --malloc-limit-mb 32"
        );
    }

    #[test]
    fn odd_paths_are_quoted_for_the_shell() {
        let file = Path::new("my out/it's");
        let replay = Reproduce::Replay {
            exe: "/x/fz".into(),
            memory_args: Vec::new(),
        };
        assert_eq!(
            replay.command(file, false),
            r"/x/fz replay 'my out/it'\''s'"
        );
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a$b"), "'a$b'");
    }
}
