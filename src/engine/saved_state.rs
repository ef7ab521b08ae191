//! What a client learned that its queue does not hold (the dictionary, with the tokens learned
//! from comparisons), saved beside its queue every few seconds and loaded when a campaign
//! resumes on the same output directory, however the last one was stopped.

use std::{
    fs,
    path::{Path, PathBuf},
};

use libafl::{mutators::Tokens, HasMetadata};
use serde::{Deserialize, Serialize};

use crate::{cmplog::learned_tokens::LearnedTokens, platform::output};

/// Starts every state file, so a foreign file is told from a damaged one.
const MAGIC: &[u8; 12] = b"lafuzz-state";
const VERSION: u32 = 1;

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Saved {
    version: u32,
    tokens: Vec<Vec<u8>>,
    learned_tokens: u64,
}

/// The state file of the client whose queue is `queue_dir`.
pub fn file(queue_dir: &Path) -> PathBuf {
    queue_dir.join(".lafuzz-state")
}

/// True when the state file is missing or was written more than `age` ago.
pub fn older_than(queue_dir: &Path, age: std::time::Duration) -> bool {
    fs::metadata(file(queue_dir))
        .and_then(|m| m.modified())
        .map_or(true, |written| written.elapsed().map_or(true, |e| e >= age))
}

/// Writes what `state` learned (atomically: a stopped campaign leaves the old file or the new).
pub fn save(state: &impl HasMetadata, queue_dir: &Path) -> std::io::Result<()> {
    let saved = Saved {
        version: VERSION,
        tokens: state
            .metadata_map()
            .get::<Tokens>()
            .map(|t| t.tokens().to_vec())
            .unwrap_or_default(),
        learned_tokens: state
            .metadata_map()
            .get::<LearnedTokens>()
            .map_or(0, |l| l.count),
    };
    let mut bytes = MAGIC.to_vec();
    bytes.extend(postcard::to_allocvec(&saved).map_err(std::io::Error::other)?);
    output::write_atomic(&file(queue_dir), &bytes)
}

/// Reads a state file; `Err` says why it cannot be used.
fn read(path: &Path) -> Result<Saved, String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let payload = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or("not a lafuzz state file")?;
    let saved: Saved = postcard::from_bytes(payload).map_err(|e| format!("damaged: {e}"))?;
    if saved.version != VERSION {
        return Err(format!("version {} is not {VERSION}", saved.version));
    }
    Ok(saved)
}

/// Adds what a previous campaign's client saved to a fresh `state`; a missing or unusable
/// file adds nothing (`check` reported it before the campaign started).
pub fn load(state: &mut impl HasMetadata, queue_dir: &Path) {
    let Ok(saved) = read(&file(queue_dir)) else {
        return;
    };
    let tokens = state.metadata_or_insert_with(Tokens::new);
    for token in &saved.tokens {
        tokens.add_token(token);
    }
    state.metadata_or_insert_with(LearnedTokens::default).count = saved.learned_tokens;
}

/// Before a campaign resumes: a state file that cannot be used is reported and set aside,
/// never fatal.
pub fn check(queue_dirs: &[PathBuf]) {
    for path in queue_dirs
        .iter()
        .map(|dir| file(dir))
        .filter(|p| p.exists())
    {
        if let Err(why) = read(&path) {
            let aside = path.with_extension("damaged");
            let _ = fs::rename(&path, &aside);
            println!(
                "lafuzz: warning: ignoring the saved state {} ({why}); moved to {}",
                path.display(),
                aside.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::test_state::empty as fresh_state;

    #[test]
    fn learned_tokens_survive_a_restart_and_damage_is_set_aside() {
        let dir = std::env::temp_dir().join(format!("lafuzz-saved-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut state = fresh_state();
        let mut tokens = Tokens::new();
        tokens.add_token(&b"MAGIC".to_vec());
        state.add_metadata(tokens);
        state.add_metadata(LearnedTokens { count: 3 });
        save(&state, &dir).unwrap();

        let mut resumed = fresh_state();
        load(&mut resumed, &dir);
        assert!(resumed
            .metadata::<Tokens>()
            .unwrap()
            .tokens()
            .contains(&b"MAGIC".to_vec()));
        assert_eq!(resumed.metadata::<LearnedTokens>().unwrap().count, 3);

        fs::write(file(&dir), b"lafuzz-state\xff\xff\xff").unwrap();
        check(std::slice::from_ref(&dir));
        assert!(!file(&dir).exists() && file(&dir).with_extension("damaged").exists());
        let mut after_damage = fresh_state();
        load(&mut after_damage, &dir);
        assert!(after_damage.metadata::<Tokens>().is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
