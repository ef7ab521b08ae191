//! What a standalone target is, found out before the campaign starts.

use std::{
    io::Read,
    process::{Command, Stdio},
    thread::sleep,
    time::{Duration, Instant},
};

/// How long a target may take to report its map size.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks the target for its coverage map size (`AFL_DUMP_MAP_SIZE=1`, understood by our
/// standalone runtime and AFL++'s). A program that does not answer is not a fuzzing target:
/// better a clear error now than a fork server that never says hello.
pub fn map_size(target: &[String]) -> Result<usize, String> {
    let Some(program) = target.first() else {
        return Err(
            "forkserver and persistent modes need a target: `-- ./target [args] [@@]`".into(),
        );
    };
    let not_target = |why: String| {
        format!(
            "{program} is not a fuzzing target ({why}): build it with `libafl_cc --standalone` \
             or afl-clang-fast"
        )
    };
    let mut child = Command::new(program)
        .args(&target[1..])
        .env("AFL_DUMP_MAP_SIZE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run target {program}: {e}"))?;
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > PROBE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(not_target(
                "it did not report its map size within 10 s".into(),
            ));
        }
        sleep(Duration::from_millis(10));
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    match out.trim().parse::<usize>() {
        Ok(size) if size > 0 => Ok(size),
        _ => Err(not_target(format!(
            "AFL_DUMP_MAP_SIZE=1 printed {:?}, not a map size",
            out.trim()
        ))),
    }
}

/// True when `program` was built by our `libafl_cc --standalone` (its runtime can log
/// comparisons); AFL++'s builds cannot, and get no tracing fork server.
pub fn logs_comparisons(program: &str) -> bool {
    mentions(program, crate::target::runtime_abi::cmplog_shm_env())
}

/// True when `program`'s runtime (ours) answers the fuzzer itself between persistent inputs
/// once told the timeout signal.
pub fn answers_directly(program: &str) -> bool {
    mentions(program, crate::target::runtime_abi::timeout_signal_env())
}

/// True when `program`'s file holds `name` (a variable its runtime reads).
fn mentions(program: &str, name: &str) -> bool {
    std::fs::read(program)
        .is_ok_and(|bytes| bytes.windows(name.len()).any(|w| w == name.as_bytes()))
}
