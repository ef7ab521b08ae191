#!/usr/bin/env bash
# Branch coverage of each corpus left by `bench/scaling.sh` in WORK, replayed through one
# llvm-cov build (e.g. target/bench-build/libpng-cov), counting the files whose path contains
# SOURCE (the library's sources, not the harness).
#
#   bench/scaling-coverage.sh WORK COV_BINARY SOURCE
set -eu
work=$1 cov=$2 source=$3
for corpus in "$work"/*/corpus; do
    run=$(dirname "$corpus")
    find -L "$corpus" -type f >"$run/inputs.list"
    LLVM_PROFILE_FILE=$run/replay.profraw "$cov" "$run/inputs.list" >/dev/null 2>&1 || true
    llvm-profdata-19 merge -sparse "$run/replay.profraw" -o "$run/replay.profdata"
    llvm-cov-19 export -summary-only -instr-profile="$run/replay.profdata" "$cov" |
        python3 -c '
import json, sys
files = json.load(sys.stdin)["data"][0]["files"]
b = sum(f["summary"]["branches"]["covered"] for f in files if sys.argv[1] in f["filename"])
print(f"{sys.argv[2]:<14} {b:6d} branches")' "$source" "$(basename "$run")"
done
