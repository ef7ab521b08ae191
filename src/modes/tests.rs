//! What the modes decide before and while a campaign runs, checked without running one.

use std::cell::Cell;

use libafl::mutators::Tokens;

use super::{of, standalone::fork_server::aligned, tracer::Tracer, ExecutionMode};
use crate::{
    config::{FuzzConfig, TracerTarget},
    options::{fuzz_options, FuzzOptions, Mode},
    target::reproduce::Reproduce,
};

const MODES: [Mode; 5] = [
    Mode::Direct,
    Mode::Reset,
    Mode::Fork,
    Mode::Forkserver,
    Mode::Persistent,
];

fn opts(args: &[&str]) -> FuzzOptions {
    let mut all = vec!["-i", "seeds", "-o", "out"];
    all.extend_from_slice(args);
    fuzz_options(&all)
}

#[test]
fn only_in_process_modes_triage_crashes_and_only_fork_mode_binds_symbols_at_load() {
    for mode in MODES {
        let chosen: &dyn ExecutionMode = of(mode);
        let in_process = matches!(mode, Mode::Direct | Mode::Reset);
        assert_eq!(chosen.triages_crashes(), in_process, "{mode:?}");
        assert_eq!(
            chosen.binds_symbols_at_load(),
            mode == Mode::Fork,
            "{mode:?}"
        );
    }
}

#[test]
fn modes_that_link_the_harness_refuse_a_standalone_target_and_need_a_harness() {
    for mode in MODES.into_iter().filter(|m| !m.runs_standalone_target()) {
        let name = mode.name();
        let with_target = opts(&["--mode", &name, "--", "./target", "@@"]);
        let error = of(mode).check(&with_target).unwrap_err();
        assert!(
            error.contains("needs --mode forkserver or persistent"),
            "{mode:?}: {error}"
        );
        // This test binary is not instrumented: it has no harness to fuzz.
        let error = of(mode).check(&opts(&["--mode", &name])).unwrap_err();
        assert!(
            error.contains("no instrumented harness linked"),
            "{mode:?}: {error}"
        );
    }
}

#[test]
fn standalone_modes_run_the_target_and_its_arguments_and_reproduce_with_it() {
    let standalone = opts(&[
        "--mode",
        "persistent",
        "--cmplog",
        "./traced",
        "--",
        "./target",
        "-x",
        "@@",
    ]);
    let mode = of(Mode::Persistent);
    assert_eq!(
        mode.cmplog_command(&standalone).unwrap(),
        ["./traced", "-x", "@@"],
        "the --cmplog build gets the target's arguments"
    );
    assert!(matches!(
        mode.reproduce(&standalone),
        Reproduce::Target { command } if command == ["./target", "-x", "@@"]
    ));
    let direct = opts(&["--cmplog", "./traced"]);
    assert_eq!(
        of(Mode::Direct).cmplog_command(&direct).unwrap(),
        ["./traced"]
    );
    assert_eq!(of(Mode::Direct).cmplog_command(&opts(&[])), None);
}

#[test]
fn a_standalone_target_without_a_map_size_is_refused_before_start() {
    let error = of(Mode::Forkserver)
        .check(&opts(&[
            "--mode",
            "forkserver",
            "--",
            "/nonexistent/target",
        ]))
        .unwrap_err();
    assert!(error.contains("/nonexistent/target"), "{error}");
}

fn config(cmplog_target: Option<TracerTarget>) -> FuzzConfig {
    FuzzConfig {
        opts: opts(&[]),
        output: "out".into(),
        tokens: Tokens::new(),
        seeds: Vec::new(),
        map_size: 64,
        cmplog_target,
        grimoire: false,
    }
}

#[test]
fn the_cmplog_build_traces_when_there_is_one_else_the_target_itself() {
    let asked_the_target = Cell::new(false);
    let own = || {
        asked_the_target.set(true);
        Ok(None)
    };
    let chosen = Tracer::choose(&config(None), None, own).unwrap();
    assert!(chosen.is_none() && asked_the_target.get());
    assert!(Tracer::target_traces_itself(&config(None)));

    let build = TracerTarget {
        command: vec!["/nonexistent/traced".to_string()],
        map_size: 64,
    };
    asked_the_target.set(false);
    let with_build = config(Some(build));
    assert!(!Tracer::target_traces_itself(&with_build));
    // The build's fork server is started (and fails: there is no such binary); the target is
    // not asked.
    assert!(Tracer::choose(&with_build, None, own).is_err());
    assert!(!asked_the_target.get());
}

#[test]
fn fork_server_maps_are_whole_multiples_of_libafls_alignment() {
    assert_eq!(aligned(1), 64);
    assert_eq!(aligned(64), 64);
    assert_eq!(aligned(3001), 3008);
}
