#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Installs what building and testing wsched needs on Debian/Ubuntu, if it is
# missing: gcc and g++ (the C++ consumer of the install test), clang (the
# fuzzer and the clang CI run), CMake, make, pkg-config, python3 (trace,
# layer and defaults checks), OpenSSL's libcrypto (the UTS benchmark), hwloc
# (topology; optional), spin (the protocol models of verify/), doxygen (the
# API reference check), the Debian packaging tools (the package test and
# docs/WALKTHROUGH.md's), procps (its ps), Open
# MPI (libwsched_mpi, wsbench-mpi and their tests; optional: without it they
# are not built) and, on x86-64, gcc's 32-bit multilib (the m32 run) and
# the arm64 cross compiler with qemu-user (the aarch64 run).
# Runs apt-get as root, or through sudo when available; otherwise prints the
# command to run.
set -euo pipefail
pkgs=(gcc g++ make cmake pkg-config python3 libssl-dev libhwloc-dev binutils spin clang libclang-rt-dev doxygen)
pkgs+=(dpkg-dev debhelper fakeroot) # the Debian package and its test (tests/debian/test_deb.sh)
pkgs+=(reuse) # the license headers (ctest spdx, tests/check_reuse.sh)
pkgs+=(procps) # ps, which docs/WALKTHROUGH.md shows (ctest walkthrough)
pkgs+=(abigail-tools) # abidw, abidiff: the ABI against its baseline (ctest abi, tests/abi/)
pkgs+=(libopenmpi-dev openmpi-bin) # libwsched_mpi (WSCHED_MPI=AUTO finds it), mpiexec for its tests
if [ "$(uname -m)" = x86_64 ]; then
  # Debian's gcc-multilib metapackage conflicts with gcc-<v>-aarch64-linux-gnu
  # (installing either removes the other); gcc-<v>-multilib, the 32-bit
  # libraries gcc -m32 needs, does not. So the versioned one, for the gcc
  # that gcc is. (gcc-multilib's only file is the link /usr/include/asm ->
  # x86_64-linux-gnu/asm; scripts/test.sh m32 makes it in the build.)
  v=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
  [ -n "$v" ] || v=$(apt-cache depends gcc 2>/dev/null | grep -o 'gcc-[0-9][0-9]*' | head -1 | cut -d- -f2)
  pkgs+=("gcc-${v:-12}-multilib")                                  # scripts/test.sh m32
  pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user) # scripts/test.sh aarch64
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "wsched: please install: ${missing[*]}" >&2
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo"
else
  echo "wsched: missing packages; run as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "wsched: installing ${missing[*]}" >&2
$sudo apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
