#!/usr/bin/env bash
# ClusterFuzz's libFuzzer engine library, from PyPI, in target/clusterfuzz-venv: the libFuzzer
# contract tests (tests/clusterfuzz.rs) drive our fuzzers with it, as ClusterFuzz's bots do.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/clusterfuzz-venv
version=2.6.0
if "$venv/bin/python" -c "import clusterfuzz.fuzz" 2>/dev/null &&
  [ "$(cat "$venv/.version" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "clusterfuzz==$version"
echo "$version" >"$venv/.version"
