//! The screen drawn into ratatui's test terminal: every number where it belongs.

use ratatui::{backend::TestBackend, Terminal};

use super::*;

/// The screen drawn into a `width` x `height` test terminal, as text, one line per row.
pub fn rendered(view: &View, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render(frame, view)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            let row: String = (0..width).map(|x| buffer[(x, y)].symbol()).collect();
            row.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn sample() -> Snapshot {
    Snapshot {
        run_time: Duration::from_secs(3725),
        execs_done: 7_450_000,
        execs_per_sec: 2012.4,
        corpus_count: 57,
        saved_crashes: 2,
        saved_flaky_crashes: 1,
        saved_hangs: 3,
        saved_ooms: 4,
        saved_leaks: 5,
        client_restarts: 6,
        edges_found: 30,
        total_edges: 120,
        clients: 2,
        cmplog_tokens: 9,
        cycles_done: 11,
        last_find: 1_700_000_000 - 42,
        last_crash: 0,
        stability: Some(99.5),
        peak_rss_mb: 64,
        exec_timeout_ms: 20,
    }
}

#[test]
fn the_screen_shows_every_number() {
    let snap = sample();
    let clients = [
        ClientLine {
            id: 1,
            execs: 4_000_000,
            execs_per_sec: 1000.0,
            corpus: 50,
            edges: Some((30, 120)),
        },
        ClientLine {
            id: 2,
            execs: 3_450_000,
            execs_per_sec: 1012.0,
            corpus: 48,
            edges: None,
        },
    ];
    let findings = [
        "new crash saved: out/crashes/54bc164f000d4765".to_string(),
        "  reproduce with: target/fuzzers/crashme replay out/crashes/54bc164f000d4765".to_string(),
    ];
    let view = View {
        snap: &snap,
        label: "mode: direct, comparisons: on, cores: 2",
        clients: &clients,
        findings: &findings,
        now: 1_700_000_000,
    };
    let text = rendered(&view, 100, 30);
    println!("{text}");
    for expected in [
        "lafuzz: mode: direct, comparisons: on",
        "process timing",
        "overall results",
        "findings",
        "clients",
        "run time : 1:02:05",
        "last new find : 0:00:42 ago",
        "last uniq crash : none yet",
        "cycles done : 11",
        "corpus count : 57",
        "edges found : 30/120",
        "map density : 25.00%",
        "stability : 99.50%",
        "crashes : 2 (+1 flaky)",
        "hangs : 3",
        "ooms : 4",
        "leaks : 5",
        "client restarts : 6",
        "total execs : 7450000",
        "exec speed : 2012/s",
        "average speed : 2000/s",
        "peak rss : 64 MiB",
        "cmplog tokens : 9",
        "exec timeout : 20 ms",
        "edges 30/120",
        "corpus     48",
        "reproduce with: target/fuzzers/crashme replay out/crashes/54bc164f000d4765",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }
    assert!(text.contains("client   1 |") && text.contains("client   2 |"));
}

#[test]
fn many_clients_are_summed_up_and_only_the_latest_findings_fit() {
    let snap = Snapshot::default();
    let clients: Vec<ClientLine> = (1..=12)
        .map(|id| ClientLine {
            id,
            ..ClientLine::default()
        })
        .collect();
    let findings: Vec<String> = (0..40).map(|i| format!("notice {i}")).collect();
    let view = View {
        snap: &snap,
        label: "mode: fork, comparisons: off",
        clients: &clients,
        findings: &findings,
        now: 0,
    };
    let text = rendered(&view, 90, 30);
    assert!(text.contains("... and 4 more"), "{text}");
    assert!(
        text.contains("notice 39") && !text.contains("notice 0 "),
        "{text}"
    );
    assert!(text.contains("stability : n/a"), "{text}");
}
