//! The power schedule's path frequencies across a client's restart. LibAFL keeps them in
//! `SchedulerMetadata` as a count per path hash, 2^21 of them, nearly all zero; the state that
//! a client saves when it restarts (after every crash or timeout in the in-process modes)
//! carried all 2^21, element by element through LibAFL's type-erased serialization: on
//! stb_image, whose mutants time out several times a second, saving and restoring them took a
//! third of the campaign's time. So the state is saved with the nonzero counts only
//! ([`compact`]), and the restarted client rebuilds the table ([`expand`]).

use libafl::{
    schedulers::powersched::{PowerSchedule, SchedulerMetadata},
    HasMetadata,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `SchedulerMetadata` with only its nonzero path counts, while the state is saved.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CompactSchedulerMetadata {
    strat: Option<PowerSchedule>,
    exec_time: Duration,
    cycles: u64,
    bitmap_size: u64,
    bitmap_size_log: f64,
    bitmap_entries: u64,
    queue_cycles: u64,
    /// (path hash index, count) of every path seen.
    paths: Vec<(u32, u32)>,
}
libafl_bolts::impl_serdeany!(CompactSchedulerMetadata);

/// Before the state is saved for a restart: replaces the scheduler's metadata with its
/// compact form. The state cannot schedule until [`expand`].
pub fn compact<S: HasMetadata>(state: &mut S) {
    let Some(full) = state.metadata_map_mut().remove::<SchedulerMetadata>() else {
        return;
    };
    let paths = full
        .n_fuzz()
        .iter()
        .enumerate()
        .filter(|&(_, &count)| count != 0)
        .map(|(index, &count)| (index as u32, count))
        .collect();
    state.add_metadata(CompactSchedulerMetadata {
        strat: full.strat(),
        exec_time: full.exec_time(),
        cycles: full.cycles(),
        bitmap_size: full.bitmap_size(),
        bitmap_size_log: full.bitmap_size_log(),
        bitmap_entries: full.bitmap_entries(),
        queue_cycles: full.queue_cycles(),
        paths,
    });
}

/// After a restarted client restored its state (or when the save did not happen): the
/// scheduler's metadata back from its compact form, if [`compact`] made one.
pub fn expand<S: HasMetadata>(state: &mut S) {
    let Some(compact) = state
        .metadata_map_mut()
        .remove::<CompactSchedulerMetadata>()
    else {
        return;
    };
    let mut full = SchedulerMetadata::new(compact.strat);
    full.set_exec_time(compact.exec_time);
    full.set_cycles(compact.cycles);
    full.set_bitmap_size(compact.bitmap_size);
    full.set_bitmap_size_log(compact.bitmap_size_log);
    full.set_bitmap_entries(compact.bitmap_entries);
    full.set_queue_cycles(compact.queue_cycles);
    let counts = full.n_fuzz_mut();
    for &(index, count) in &compact.paths {
        if let Some(slot) = counts.get_mut(index as usize) {
            *slot = count;
        }
    }
    state.add_metadata(full);
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl::{inputs::BytesInput, schedulers::powersched::N_FUZZ_SIZE, state::NopState};

    #[test]
    fn a_compacted_schedule_expands_to_the_same_metadata() {
        let mut state = NopState::<BytesInput>::new();
        let mut meta = SchedulerMetadata::new(Some(PowerSchedule::fast()));
        meta.set_exec_time(Duration::from_micros(1234));
        meta.set_cycles(7);
        meta.set_bitmap_size(4272);
        meta.set_bitmap_size_log(371.598_237_504_161_7);
        meta.set_bitmap_entries(65);
        meta.set_queue_cycles(2);
        meta.n_fuzz_mut()[3] = 9;
        meta.n_fuzz_mut()[N_FUZZ_SIZE - 1] = 1;
        state.add_metadata(meta.clone());

        compact(&mut state);
        assert!(!state.has_metadata::<SchedulerMetadata>());
        let saved = postcard::to_allocvec(state.metadata_map()).unwrap();
        assert!(
            saved.len() < 200,
            "the saved schedule takes {} bytes",
            saved.len()
        );

        expand(&mut state);
        let back = state.metadata::<SchedulerMetadata>().unwrap();
        assert_eq!(format!("{back:?}"), format!("{meta:?}"));
        assert!(!state.has_metadata::<CompactSchedulerMetadata>());
        // Expanding twice, or without a compact form, changes nothing.
        expand(&mut state);
        assert_eq!(
            format!("{:?}", state.metadata::<SchedulerMetadata>().unwrap()),
            format!("{meta:?}")
        );
    }
}
