#!/usr/bin/env bash
# Multi-core scaling of `direct` mode against AFL++ (one -M and N-1 -S instances), side by side
# on one many-core machine: the same seeds, each run alone on cores 0..N-1 for SECS seconds.
# Prints total execs/s and corpus size per core count, and leaves each run's corpus in
# WORK/<fuzzer>-<N>/corpus for a coverage replay (`bench/scaling-coverage.sh`).
#
#   bench/scaling.sh FUZZER SEEDS WORK SECS "1 4 16" [AFL_FUZZ AFL_TARGET]
#
# FUZZER is one of our fuzzer binaries (e.g. target/fuzzers/libpng); AFL_TARGET an AFL++
# persistent build of the same harness (target/bench-build/libpng-afl). Without them, ours only.
set -u
fuzzer=$1 seeds=$2 work=$3 secs=$4 counts=$5 afl=${6:-} afl_target=${7:-}
mkdir -p "$work"

# Value of `key` in a `key : value` stats file.
stat() { sed -n "s/^$2 *: *//p" "$1" | head -1; }

ours() {
    local n=$1 dir=$work/ours-$n
    rm -rf "$dir" && mkdir -p "$dir"
    # Own process group, stopped by its id if it outlives its --max-time.
    setsid taskset -c "0-$((n - 1))" "$fuzzer" fuzz --mode direct --cores "0-$((n - 1))" \
        --max-time "$secs" -i "$seeds" -o "$dir/out" >"$dir/log" 2>&1 &
    local pid=$!
    sleep $((secs + 20)) && kill -KILL -- -$pid 2>/dev/null &
    local guard=$!
    wait $pid
    kill $guard 2>/dev/null
    ln -sfn out/queue "$dir/corpus"
    local s=$dir/out/fuzzer_stats
    printf 'ours-direct  %2d cores  %12.0f execs/s  %6s corpus  %6s edges\n' "$n" \
        "$(stat "$s" execs_per_sec)" "$(stat "$s" corpus_count)" "$(stat "$s" edges_found)"
}

aflpp() {
    local n=$1 dir=$work/aflpp-$n pids=()
    rm -rf "$dir" && mkdir -p "$dir/corpus"
    export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
        AFL_SKIP_CRASHES=1
    for ((i = 0; i < n; i++)); do
        local role=-S name=s$i
        ((i == 0)) && role=-M name=main
        setsid "$afl" -b "$i" -i "$seeds" -o "$dir/out" "$role" "$name" -V "$secs" \
            -- "$afl_target" >"$dir/log-$i" 2>&1 &
        pids+=($!)
    done
    sleep $((secs + 20)) && for p in "${pids[@]}"; do kill -KILL -- -"$p" 2>/dev/null; done &
    local guard=$!
    wait "${pids[@]}"
    kill $guard 2>/dev/null
    local execs=0 time=0
    for s in "$dir"/out/*/fuzzer_stats; do
        execs=$((execs + $(stat "$s" execs_done)))
        local t=$(($(stat "$s" last_update) - $(stat "$s" start_time)))
        ((t > time)) && time=$t
        local inst
        inst=$(basename "$(dirname "$s")")
        for f in "$dir/out/$inst"/queue/id*; do cp "$f" "$dir/corpus/$inst-${f##*/}"; done
    done
    ((time > 0)) || time=$secs
    printf 'aflpp        %2d cores  %12.0f execs/s  %6s corpus\n' "$n" "$((execs / time))" \
        "$(find "$dir/corpus" -type f | wc -l)"
}

echo "scaling on $(nproc) cores, $secs s per run"
for n in $counts; do
    ours "$n"
    [ -n "$afl" ] && aflpp "$n"
done
