"""Drive a fuzz target through ClusterFuzz's own libFuzzer engine (PyPI `clusterfuzz`).

usage: drive.py TARGET WORKDIR SEEDS_DIR [leak]

Steps, as ClusterFuzz and ClusterFuzzLite run them: prepare, fuzz, reproduce (and the crash state
of the fuzzing log's report against the reproducing run's), minimize_testcase, minimize_corpus. With `leak`, the target leaks memory: fuzz must report the leak as a crash (a
`leak-` testcase) and reproduce must fail on it; the minimizing steps are left out. Prints one `PASS step` / `FAIL step: why` line per step and exits 1 if any failed.
"""
import os
import shutil
import sys

from clusterfuzz.environment import Environment
import clusterfuzz.fuzz
from clusterfuzz._internal.metrics import logs
from clusterfuzz.stacktraces import StackParser


def log_error(message, **kwargs):
    # The engine reports failures through this and otherwise swallows the target's output.
    print("clusterfuzz error:", message, {k: str(v)[-2000:] for k, v in kwargs.items()})


logs.log_error = log_error


def crash_state(target, output):
    """(crash type, crash state) as ClusterFuzz's stack parser reads them from `output`."""
    parser = StackParser(symbolized=True, detect_ooms_and_hangs=True, include_ubsan=True,
                         fuzz_target=os.path.basename(target))
    crash = parser.parse(output)
    return crash.crash_type, crash.crash_state.strip() or "NULL"


def files(directory):
    return [os.path.join(directory, name) for name in sorted(os.listdir(directory))]


def main():
    target, work, seeds = (os.path.abspath(arg) for arg in sys.argv[1:4])
    leak = sys.argv[4:] == ["leak"]
    kind = "/leak-" if leak else "/crash-"
    shutil.rmtree(work, ignore_errors=True)
    corpus, reproducers, minimized = (os.path.join(work, name)
                                      for name in ("corpus", "reproducers", "minimized"))
    for directory in (corpus, reproducers, minimized):
        os.makedirs(directory)
    for seed in files(seeds):
        shutil.copy(seed, corpus)
    failed = []

    def check(step, ok, why):
        print(("PASS " + step) if ok else ("FAIL %s: %s" % (step, why)), flush=True)
        if not ok:
            failed.append(step)

    with Environment("libFuzzer", "address", target):
        engine = clusterfuzz.fuzz.get_engine("libFuzzer")
        options = engine.prepare(corpus, target, os.path.dirname(target))
        options.merge_back_new_testcases = False
        options.analyze_dictionary = False
        options.arguments += ["-seed=1337", "-len_control=0"]  # what ClusterFuzzLite adds
        check("prepare", "-timeout=25" in options.arguments, options.arguments)
        # A session that finds crashme's hang waits out the timeout: 5 s instead of ClusterFuzz's
        # 25 keeps the test short (crashme's other inputs run in microseconds).
        options.arguments = ["-timeout=5" if a == "-timeout=25" else a for a in options.arguments]

        # crashme also has a planted hang: a session that finds it first files a timeout, and
        # fuzzing goes on on another bot, which must find the crash. That bot starts from the
        # project's seeds with a seed of its own: the corpus the last session grew (inputs one
        # byte from the hang) leads straight back to the hang, whichever engine runs.
        for attempt in range(4):
            if attempt:
                shutil.rmtree(corpus)
                os.makedirs(corpus)
                for seed in files(seeds):
                    shutil.copy(seed, corpus)
                options.arguments = [a for a in options.arguments if not a.startswith("-seed=")]
                options.arguments.append("-seed=%d" % (1337 + attempt))
            result = engine.fuzz(target, options, reproducers, 60)
            crash = result.crashes[0] if result.crashes else None
            if crash is None or "/timeout-" not in crash.input_path:
                break
            print("session found a timeout (%s); fuzzing again" % crash.input_path)
        size = os.path.getsize(crash.input_path) if crash else 0
        check("fuzz", crash is not None and size > 0 and kind in crash.input_path,
              "crashes %s, stats %s, log tail %s" % (result.crashes, result.stats,
                                                     result.logs[-3000:]))
        if crash is None or size == 0:
            return 1

        reproduced = engine.reproduce(target, crash.input_path, crash.reproduce_args, 60)
        check("reproduce", reproduced.return_code not in (0, 72),
              "exit %s, output %s" % (reproduced.return_code, reproduced.output[-2000:]))
        # The fuzz task groups a session's crashes, and matches them to filed bugs, by the crash
        # state of the fuzzing log's report; the reproducing run must name the crash the same.
        found, again = crash_state(target, crash.stacktrace), crash_state(target, reproduced.output)
        check("crash_state", found == again and found[1] != "NULL",
              "fuzzing %s, reproducing %s, fuzzing log %s" % (found, again,
                                                              crash.stacktrace[-3000:]))
        if leak:
            return 1 if failed else 0

        minimized_crash = os.path.join(work, "minimized-crash")
        # libFuzzer's -minimize_crash goes on until its -max_total_time, (max_time - 10) / 2 s,
        # even once nothing smaller crashes: 14 s gives it 2 s (60 s made the control take 27 s).
        engine.minimize_testcase(target, [], crash.input_path, minimized_crash, 14)
        small = os.path.exists(minimized_crash) and 0 < os.path.getsize(minimized_crash) <= 4
        if small:
            again = engine.reproduce(target, minimized_crash, [], 60)
            small = again.return_code not in (0, 72)
        check("minimize_testcase", small,
              "%s: %s bytes" % (minimized_crash, os.path.exists(minimized_crash)
                                and os.path.getsize(minimized_crash)))

        before = engine.minimize_corpus(target, [], [corpus], os.path.join(work, "m0"),
                                        reproducers, 120) if os.makedirs(
                                            os.path.join(work, "m0")) is None else None
        after = engine.minimize_corpus(target, [], [corpus], minimized, reproducers, 120)
        kept = len(os.listdir(minimized))
        check("minimize_corpus",
              0 < kept <= len(os.listdir(corpus))
              and after.stats["edge_coverage"] > 0
              and after.stats["edge_coverage"] == before.stats["edge_coverage"],
              "kept %d of %d, stats %s" % (kept, len(os.listdir(corpus)), after.stats))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
