"""The crash ClusterFuzz files for an input: its engine reproduces it, its stack parser names it.

usage: crash_state.py TARGET INPUT [LIBFUZZER_ARG...]

Prints `TYPE <crash type>` and `STATE <frame>|<frame>|...` (ClusterFuzz's crash state: the top
three frames it does not ignore; one bug per state), as the libFuzzer engine's reproduce step
and ClusterFuzz's stack analysis see them on an ASan job.
"""
import os
import sys

from clusterfuzz.environment import Environment
import clusterfuzz.fuzz
from clusterfuzz.stacktraces import StackParser


def main():
    target, testcase = (os.path.abspath(arg) for arg in sys.argv[1:3])
    with Environment("libFuzzer", "address", target):
        engine = clusterfuzz.fuzz.get_engine("libFuzzer")
        reproduced = engine.reproduce(target, testcase, sys.argv[3:], 60)
        parser = StackParser(symbolized=True, detect_ooms_and_hangs=True, include_ubsan=True,
                             fuzz_target=os.path.basename(target))
        crash = parser.parse(reproduced.output)
    print("TYPE", crash.crash_type)
    print("STATE", "|".join(crash.crash_state.splitlines()))
    print("EXIT", reproduced.return_code)


if __name__ == "__main__":
    sys.exit(main())
