#!/usr/bin/env bash
# `cargo make install PREFIX=DIR`: libafl_cc, libafl_cxx and fuzzer into DIR/bin, the wrappers'
# parts (runtimes, passes) into DIR/lib/lafuzz, where the wrappers look for them relative to
# themselves: the install works from any directory and can be moved whole.
# Run after `cargo build --release` (the task does both).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=""
for arg in "$@"; do
  case "$arg" in
    PREFIX=*) prefix="${arg#PREFIX=}" ;;
    *) echo "install: unknown argument '$arg' (usage: cargo make install PREFIX=DIR)" >&2; exit 2 ;;
  esac
done
if [ -z "$prefix" ]; then
  echo "install: no PREFIX given (usage: cargo make install PREFIX=DIR)" >&2
  exit 2
fi
# Where cargo built them (CARGO_TARGET_DIR, as cargo, relative to the repository root).
bin="${CARGO_TARGET_DIR:-target}/release"
for tool in libafl_cc libafl_cxx fuzzer; do
  [ -x "$bin/$tool" ] || { echo "install: $bin/$tool missing: run cargo build --release" >&2; exit 1; }
done
# Every part the built wrapper uses (it fails, naming the part, if one is missing).
parts=$("$bin/libafl_cc" --print-parts)
if [ "$(echo "$parts" | wc -l)" -lt 4 ]; then
  echo "install: the wrapper was built without its LLVM passes (LLVM development files missing?):" >&2
  echo "$parts" >&2
  exit 1
fi
mkdir -p "$prefix/bin" "$prefix/lib/lafuzz"
for tool in libafl_cc libafl_cxx fuzzer; do
  install -m 755 "$bin/$tool" "$prefix/bin/$tool"
done
while IFS= read -r part; do
  install -m 644 "$part" "$prefix/lib/lafuzz/"
done <<< "$parts"
echo "installed into $prefix: bin/libafl_cc bin/libafl_cxx bin/fuzzer, lib/lafuzz/ ($(echo "$parts" | wc -l) parts)"
