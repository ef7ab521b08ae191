//! The concrete LibAFL types every layer above shares: one client's observers, state, event
//! manager and fuzzer. Nothing here runs.

use libafl::{
    corpus::InMemoryOnDiskCorpus,
    events::LlmpRestartingEventManager,
    feedbacks::{
        CombinedFeedback, ConstFeedback, LogicEagerOr, LogicFastAnd, MapIndexesMetadata,
        MaxMapFeedback,
    },
    fuzzer::StdFuzzer,
    inputs::{BytesInput, BytesInputConverter},
    observers::{ExplicitTracking, StdMapObserver},
    schedulers::{LenTimeMulTestcasePenalty, WeightedScheduler},
    stages::{CalibrationStage, GeneralizationStage},
    state::StdState,
};
use libafl_bolts::{rands::StdRand, shmem::ShMemProvider};

use crate::{
    coverage::{
        closest_comparisons::RecordClosest, corpus_weight::BoundedSpeedWeight,
        hitcounts::HitcountsObserver, novelty::NewCoverageFeedback, scheduler::CullOnChange,
    },
    platform::shmem::SelfCleaningShMemProvider,
    solutions::{NewSolutions, SkipKnownSolutions, SolutionsOnDisk},
};

/// The coverage map: the target's 8-bit counters (or the shared map a standalone target
/// writes), bucketed into AFL hit counts.
pub type CountersMap = StdMapObserver<'static, u8, false>;
pub type EdgesMap = HitcountsObserver<CountersMap>;
/// Tracking the indices each entry covers (the minimizer's favored entries) and the counters
/// it raised (generalization).
pub type EdgesObserver = ExplicitTracking<EdgesMap, true, true>;
/// Value profile (`--value-profile`): for each comparison site, the most operand bits found
/// equal in one run (see `target/comparison_hooks.rs`); an empty map when it is off.
pub type ValueProfileMap = StdMapObserver<'static, u8, false>;
/// The observers of every fuzzing executor (tracing executors have their own).
pub type Observers = (EdgesObserver, (ValueProfileMap, ()));
pub type SharedMemory = <SelfCleaningShMemProvider as ShMemProvider>::ShMem;
pub type State =
    StdState<InMemoryOnDiskCorpus<BytesInput>, BytesInput, StdRand, SolutionsOnDisk<BytesInput>>;
pub type Mgr =
    LlmpRestartingEventManager<(), BytesInput, State, SharedMemory, SelfCleaningShMemProvider>;
/// A comparison come closer than before, looked at only with value profile on (the constant
/// says whether it is: off, the executions do not pay for a look at an empty map).
pub type ValueProfileFeedback = CombinedFeedback<
    ConstFeedback,
    RecordClosest<MaxMapFeedback<ValueProfileMap, ValueProfileMap>>,
    LogicFastAnd,
>;
/// New coverage, or (value profile) a comparison come closer than before.
pub type CoverageFeedback = CombinedFeedback<
    NewCoverageFeedback<EdgesObserver, CountersMap>,
    ValueProfileFeedback,
    LogicEagerOr,
>;
pub type Objective = NewSolutions<EdgesObserver, EdgesMap>;
pub type Scheduler = CullOnChange<
    WeightedScheduler<EdgesObserver, BoundedSpeedWeight, EdgesMap>,
    LenTimeMulTestcasePenalty,
    BytesInput,
    MapIndexesMetadata,
    EdgesObserver,
>;
pub type ClientFuzzer =
    StdFuzzer<Scheduler, CoverageFeedback, BytesInputConverter, SkipKnownSolutions, Objective>;
pub type Calibration = CalibrationStage<EdgesObserver, BytesInput, EdgesMap, Observers, State>;
pub type Generalization =
    GeneralizationStage<EdgesObserver, Mgr, BytesInput, EdgesMap, Observers, State, ClientFuzzer>;
