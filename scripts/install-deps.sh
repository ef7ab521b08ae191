#!/usr/bin/env bash
# Installs the Debian packages the build needs, or names them when we cannot.
set -euo pipefail
required=(clang-19 llvm-19 llvm-19-dev libclang-rt-19-dev zlib1g-dev binutils gnuplot-nox python3-venv)
# AFL++ (afl-clang-fast): its builds are fuzzed in the forkserver tests, which skip without it.
optional=(afl++)
missing=()
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v llvm-config-19 >/dev/null || missing+=(llvm-19)
[ -d /usr/lib/llvm-19/include/llvm ] || missing+=(llvm-19-dev)
[ -n "$(ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan*.a 2>/dev/null)" ] || missing+=(libclang-rt-19-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v ar >/dev/null || missing+=(binutils)
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
# ClusterFuzz's engine library (PyPI) for the libFuzzer contract test runs in a virtualenv.
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v afl-clang-fast >/dev/null || missing+=(afl++)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing system packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install -y ${required[*]} ${optional[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]} ..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${required[@]}" >/dev/null
apt-get install -y -qq "${optional[@]}" >/dev/null ||
  echo "note: could not install ${optional[*]}; the AFL++ compatibility test will be skipped" >&2
