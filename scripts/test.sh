#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds wsched three ways and runs the whole test suite in each:
#   release — optimized (-O2), warnings as errors
#   tsan    — ThreadSanitizer: any data race fails the build
#   asan    — AddressSanitizer + UndefinedBehaviorSanitizer: any leak,
#             invalid access or undefined behaviour fails the build
#   fuzz    — the API-sequence fuzzer (clang libFuzzer, ASan + UBSan) for
#             WS_FUZZ_SECONDS (default 120) after replaying its corpus
#   posix   — optimized, the portable platform layer (-DWSCHED_PLATFORM=posix)
#   clang   — optimized, built by clang instead of gcc
#   (posix and clang skip the SPIN models, label spin: they check the
#   models, not the build, and release already ran them)
# Usage: scripts/test.sh [release|tsan|asan|fuzz|posix|clang ...]   (default: all six)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(release tsan asan fuzz posix clang)
jobs=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
for c in "${configs[@]}"; do
  # The build type and sanitizer of each configuration are CMakePresets.json's
  # preset of that name (posix and clang: release); flags adds to it.
  flags=() cc=() ctest_extra=() # posix, clang: another platform or compiler; no second SPIN run
  case $c in
    release | tsan | asan) preset=$c ;;
    fuzz)
      echo "=== fuzz: ${WS_FUZZ_SECONDS:-120} s"
      mkdir -p build
      start=$(date +%s)
      tests/fuzz/run_fuzz.sh "${WS_FUZZ_SECONDS:-120}" > build/fuzz.log 2>&1 || { tail -60 build/fuzz.log; exit 1; }
      grep -E "^(fuzz_api:|stat::number_of_executed_units|Done )" build/fuzz.log || true
      echo "=== fuzz: passed in $(( $(date +%s) - start )) s"
      continue ;;
    posix) preset=release flags=(-DWSCHED_PLATFORM=posix) ctest_extra=(-LE spin) ;;
    clang) preset=release cc=(env CC=clang) ctest_extra=(-LE spin) ;;
    *) echo "unknown configuration '$c' (release, tsan, asan, fuzz, posix, clang)" >&2; exit 2 ;;
  esac
  echo "=== $c: build"
  start=$(date +%s)
  "${cc[@]}" cmake --preset "$preset" -B "build/$c" -DWSCHED_WERROR=ON "${flags[@]}" > /dev/null
  cmake --build "build/$c" -j"$jobs" > "build/$c.build.log" 2>&1 || { cat "build/$c.build.log"; exit 1; }
  echo "=== $c: test"
  (cd "build/$c" && ctest -j"$jobs" --timeout 900 --output-on-failure "${ctest_extra[@]}")
  echo "=== $c: passed in $(( $(date +%s) - start )) s"
done
echo "=== all passed: ${configs[*]}"
