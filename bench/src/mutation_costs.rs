//! `--mutation-costs`: what havoc's mutations cost on libpng's seeds, in ns, one by one at a
//! fixed choice and as the havoc stage makes them (stacked, each picked at random). The engine
//! cost goal (the empty harness at libFuzzer's execs/s) turns on this: libFuzzer makes one
//! mutation per execution, our havoc 12.4 on average.

use std::{hint::black_box, num::NonZero, path::Path, time::Instant};

use lafuzz::mutators::havoc::StackedMutations;
use libafl::{
    corpus::{Corpus, InMemoryCorpus, Testcase},
    feedbacks::ConstFeedback,
    inputs::BytesInput,
    mutators::{havoc_mutations, tokens_mutations, Mutator, MutatorsTuple},
    state::{HasCorpus, HasRand, StdState},
};
use libafl_bolts::{
    rands::{Rand, StdRand},
    tuples::{Merge, NamedTuple},
};

/// Calls per measurement: about a second in all.
const CALLS: u32 = 1_000_000;

/// ns per call of `step` on `input` reset to `entry` first (as the havoc stage resets its
/// buffer), less `minus`.
fn ns_per_call(
    entry: &Vec<u8>,
    input: &mut BytesInput,
    minus: f64,
    mut step: impl FnMut(&mut BytesInput),
) -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS {
        input.as_mut().clone_from(entry);
        step(black_box(&mut *input));
    }
    start.elapsed().as_nanos() as f64 / f64::from(CALLS) - minus
}

pub fn print(seeds: &Path) -> Result<(), String> {
    let mut feedback = ConstFeedback::new(false);
    let mut objective = ConstFeedback::new(false);
    let mut state = StdState::new(
        StdRand::with_seed(1),
        InMemoryCorpus::<BytesInput>::new(),
        InMemoryCorpus::new(),
        &mut feedback,
        &mut objective,
    )
    .map_err(|e| e.to_string())?;
    let mut files: Vec<_> = std::fs::read_dir(seeds)
        .map_err(|e| format!("{}: {e}", seeds.display()))?
        .filter_map(|f| f.ok().map(|f| f.path()))
        .collect();
    files.sort();
    let mut entry = None;
    for file in &files {
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        entry.get_or_insert_with(|| bytes.clone());
        let testcase = Testcase::new(BytesInput::new(bytes));
        state
            .corpus_mut()
            .add(testcase)
            .map_err(|e| e.to_string())?;
    }
    // The first seed is the entry mutated (crossovers take the others).
    let entry = entry.ok_or("no seeds")?;
    *state.corpus_mut().current_mut() = state.corpus().first();
    let mut input = BytesInput::new(entry.clone());

    let reset = ns_per_call(&entry, &mut input, 0.0, |_| {});
    println!(
        "bench: havoc's mutations on {} ({} bytes; {} entries to cross over with), \
         ns per mutation beyond resetting the input ({reset:.1} ns)",
        files[0].display(),
        entry.len(),
        files.len()
    );
    let mut mutations = havoc_mutations().merge(tokens_mutations());
    let names = mutations.names();
    let mut fixed = vec![];
    for (which, name) in names.iter().enumerate() {
        let ns = ns_per_call(&entry, &mut input, reset, |input| {
            let _ = mutations.get_and_mutate(which.into(), &mut state, input);
        });
        println!("  {name:<28} {ns:6.1}");
        fixed.push(ns);
    }
    let mean_fixed = fixed.iter().sum::<f64>() / fixed.len() as f64;
    println!("  mean, each at a fixed choice: {mean_fixed:.1}");

    let choices = NonZero::new(names.len()).ok_or("no mutations")?;
    let random = ns_per_call(&entry, &mut input, reset, |input| {
        let which = state.rand_mut().below(choices);
        let _ = mutations.get_and_mutate(which.into(), &mut state, input);
    });
    println!("  one picked at random per call: {random:.1}");

    let mut havoc = StackedMutations::new(havoc_mutations().merge(tokens_mutations()), false);
    let sizes: Vec<u64> = havoc.stack_sizes().collect();
    let mean_stack = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
    let stage = ns_per_call(&entry, &mut input, reset, |input| {
        let _ = havoc.mutate(&mut state, input);
    });
    println!(
        "  the havoc stage's stacks ({} to {}, {mean_stack} on average): {stage:.0} ns per \
         execution, {:.1} per mutation",
        sizes[0],
        sizes[sizes.len() - 1],
        stage / mean_stack
    );
    Ok(())
}
