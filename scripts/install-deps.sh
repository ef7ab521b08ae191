#!/usr/bin/env bash
# Installs the Debian packages the build needs, or names them when we cannot.
#   install-deps.sh           what the fuzzer needs: clang/LLVM 19, ASan's runtime, zlib, binutils
#   install-deps.sh --tests   and what the bench and the tests add: gnuplot (plots, afl-plot),
#                             python3-venv (ClusterFuzz's engine library), afl++ (the AFL++
#                             comparisons and tools; its tests are skipped without it)
set -euo pipefail
required=(clang-19 llvm-19 llvm-19-dev libclang-rt-19-dev zlib1g-dev binutils)
optional=()
missing=()
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v llvm-config-19 >/dev/null || missing+=(llvm-19)
[ -d /usr/lib/llvm-19/include/llvm ] || missing+=(llvm-19-dev)
[ -n "$(ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan*.a 2>/dev/null)" ] || missing+=(libclang-rt-19-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v ar >/dev/null || missing+=(binutils)
if [ "${1:-}" = "--tests" ]; then
  required+=(gnuplot-nox python3-venv)
  optional+=(afl++)
  command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  command -v afl-clang-fast >/dev/null || missing+=(afl++)
fi
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
if [ ${#optional[@]} -gt 0 ]; then
  apt-get install -y -qq "${optional[@]}" >/dev/null ||
    echo "note: could not install ${optional[*]}; the AFL++ tests will be skipped" >&2
fi
