//! `reset`: in-process like `direct`, but the harness's `LLVMFuzzerReset` runs after every
//! input, and the client restarts from a clean process every `--restart-every` inputs (as
//! AFL++'s `__AFL_LOOP(N)`). What state still leaks shows up in `crashes-flaky/`.

use libafl::{executors::ExitKind, inputs::BytesInput, Error};

use super::{
    direct::Direct,
    in_process::{fuzz_in_process, linked_harness_map_size, run_recorded},
    Coverage, ExecutionMode,
};
use crate::{
    config::FuzzConfig, engine::Client, options::FuzzOptions, target::harness, types::Observers,
};

pub struct Reset;

impl ExecutionMode for Reset {
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String> {
        linked_harness_map_size(opts)
    }
    fn warning(&self, opts: &FuzzOptions) -> Option<String> {
        (!harness::has_reset_hook()).then(|| {
            format!(
                "the harness has no LLVMFuzzerReset; reset mode only restarts the client \
                 every {} inputs",
                opts.restart_every
            )
        })
    }
    fn triages_crashes(&self) -> bool {
        true
    }
    fn coverage(&self, config: &FuzzConfig) -> Result<Coverage, Error> {
        Direct.coverage(config)
    }
    fn fuzz(&self, client: Client<'_>, observers: Observers) -> Result<(), Error> {
        let restart_every = client.config.opts.restart_every;
        fuzz_in_process(client, observers, run_then_reset, Some(restart_every))
    }
}

fn run_then_reset(input: &BytesInput) -> ExitKind {
    let exit = run_recorded(input);
    harness::reset();
    exit
}
