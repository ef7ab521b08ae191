//! `direct`: the harness runs in the client's own process (`InProcessExecutor`). The fastest
//! mode; a crash or hang is saved from the signal handler and the client restarts.

use libafl::Error;

use super::{
    in_process::{counters_observer, fuzz_in_process, linked_harness_map_size, run_recorded},
    Coverage, ExecutionMode,
};
use crate::{
    config::FuzzConfig, engine::Client, options::FuzzOptions, target::harness, types::Observers,
};

pub struct Direct;

impl ExecutionMode for Direct {
    fn check(&self, opts: &FuzzOptions) -> Result<usize, String> {
        linked_harness_map_size(opts)
    }
    fn triages_crashes(&self) -> bool {
        true
    }
    fn coverage(&self, _config: &FuzzConfig) -> Result<Coverage, Error> {
        Ok((counters_observer(harness::take_coverage_counters()?), None))
    }
    fn fuzz(&self, client: Client<'_>, observers: Observers) -> Result<(), Error> {
        fuzz_in_process(client, observers, run_recorded, None)
    }
}
