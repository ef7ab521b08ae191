#!/usr/bin/env bash
# Installs the system packages the build needs (Debian), or names them when we cannot.
set -euo pipefail
packages=(clang-19 llvm-19 llvm-19-dev libclang-rt-19-dev zlib1g-dev binutils)
missing=()
command -v clang-19 >/dev/null || missing+=(clang-19)
command -v llvm-config-19 >/dev/null || missing+=(llvm-19 llvm-19-dev)
[ -d /usr/lib/llvm-19/include/llvm ] || missing+=(llvm-19-dev)
[ -n "$(ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.asan*.a 2>/dev/null)" ] || missing+=(libclang-rt-19-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v ar >/dev/null || missing+=(binutils)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing system packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install -y ${packages[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]} ..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${packages[@]}" >/dev/null
