//! Skipping inputs already known to crash or hang.

use libafl::{fuzzer::InputFilter, inputs::HasTargetBytes, Error, HasMetadata};

use super::KnownSolutions;

/// The fuzzer's input filter: mutated inputs already known to crash or hang are not run again.
/// Once a bug is found, mutations (comparison solving above all) keep producing the same input,
/// and each rerun costs an in-process client a restart and any mode a whole timeout per hang.
/// Calibration and tracing run corpus entries directly, never through this filter.
#[derive(Debug, Default, Clone, Copy)]
pub struct SkipKnownSolutions;

impl<EM, I, S> InputFilter<EM, I, S> for SkipKnownSolutions
where
    I: HasTargetBytes,
    S: HasMetadata,
{
    fn should_execute(&mut self, input: &I, state: &mut S, _mgr: &mut EM) -> Result<bool, Error> {
        Ok(state
            .metadata_map()
            .get::<KnownSolutions>()
            .is_none_or(|known| !known.contains(&input.target_bytes())))
    }
}
