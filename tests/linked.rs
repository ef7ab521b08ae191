//! End-to-end: two campaigns linked through LLMP's broker-to-broker TCP link (`--remote-broker`),
//! as on two machines, here on one machine and two ports.

mod common;

use std::{fs, net::TcpListener, path::Path, time::Duration};

use common::*;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// True when a file of `queue` has exactly the bytes of some file in `seeds`.
fn holds_a_copy_of_a_seed(queue: &Path, seeds: &[Vec<u8>]) -> bool {
    inputs(queue)
        .iter()
        .filter_map(|f| fs::read(f).ok())
        .any(|bytes| seeds.contains(&bytes))
}

#[test]
fn a_linked_campaign_gets_the_other_ones_corpus() {
    let tmp = TempDir::new("linked");
    let bin = fuzzer("libpng");
    // Campaign A starts from one byte: it cannot write a whole valid PNG in this test's time.
    let byte = tmp.path().join("byte");
    fs::create_dir_all(&byte).unwrap();
    fs::write(byte.join("x"), "x").unwrap();
    let out_a = tmp.path().join("a");
    let port = free_port().to_string();
    let args_a = ["--cores", "0", "--broker-port", &port, "--max-time", "120"];
    let mut a = Campaign::fuzz(&bin, "direct", &byte, &out_a, &args_a);
    a.wait_for(Duration::from_secs(30), "campaign A running", |s| {
        stat(s, "execs_done") > 0
    });

    // Campaign B, with libpng's test images, links its broker to A's.
    let pngs = corpus("libpng");
    let remote = format!("127.0.0.1:{port}");
    let out_b = tmp.path().join("b");
    let args_b = [
        "--cores",
        "1",
        "--remote-broker",
        &remote,
        "--max-time",
        "120",
    ];
    let mut b = Campaign::fuzz(&bin, "direct", &pngs, &out_b, &args_b);

    let seeds: Vec<Vec<u8>> = inputs(&pngs)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .map(|p| fs::read(p).unwrap())
        .collect();
    let queue_a = out_a.join("queue");
    a.wait_for(
        Duration::from_secs(60),
        "B's seed PNGs in A's queue",
        |_| holds_a_copy_of_a_seed(&queue_a, &seeds),
    );
    assert!(b.log().contains("linked to the broker"), "{}", b.log());
    // A counts only its own client: B's statistics stay on B's side of the link.
    assert_eq!(stat(&a.stats(), "clients"), 1, "{:?}", a.stats());
    assert!(b.stop_with(libc::SIGINT).success(), "{}", b.log());
    assert!(a.stop_with(libc::SIGINT).success(), "{}", a.log());
}

#[test]
fn an_unreachable_remote_broker_is_a_one_line_error() {
    let tmp = TempDir::new("linked-errors");
    let out = tmp.path().join("out");
    let corpus = corpus("crashme");
    let crashme = fuzzer("crashme");
    // Nothing listens on a port we just had and closed.
    let closed = format!("127.0.0.1:{}", free_port());
    for (remote, error) in [
        (closed.as_str(), "cannot connect"),
        ("no-port-here", "bad --remote-broker"),
    ] {
        let args = fuzz_args(&corpus, &out, &["--remote-broker", remote]);
        assert_one_line_error(&crashme, &args, error);
    }
}
