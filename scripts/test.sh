#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Builds wsched three ways and runs the whole test suite in each:
#   release — optimized (-O2), warnings as errors
#   tsan    — ThreadSanitizer: any data race fails the build
#   asan    — AddressSanitizer + UndefinedBehaviorSanitizer: any leak,
#             invalid access or undefined behaviour fails the build
#   fuzz    — the API-sequence fuzzer (clang libFuzzer, ASan + UBSan) for
#             WS_FUZZ_SECONDS (default 60; 120 until the MPI jobs of
#             issue #17 brought CI near its 30 minutes) after replaying its corpus
#   posix   — optimized, the portable platform layer (-DWSCHED_PLATFORM=posix)
#   clang   — optimized, built by clang instead of gcc
#   m32     — optimized, a 32-bit x86 build (gcc -m32; x86-64 hosts only)
#             without hwloc, the UTS benchmark and libwsched_mpi (no i386
#             hwloc, libcrypto or MPI is installed; -DWSCHED_MPI=OFF says so
#             rather than leave it to FindMPI's failing 32-bit test build),
#             and without the four tests of host packaging (install,
#             subproject, debian_package, walkthrough: they build against
#             the host's 64-bit hwloc, libstdc++ and dpkg). On a kernel that
#             cannot run 32-bit programs (booted with ia32_emulation=off,
#             as this project's VMs were on 2026-12-01) it is built and its
#             tests are not run, with a message saying so.
#   aarch64 — optimized, cross-built for 64-bit Arm by gcc-aarch64-linux-gnu
#             (cmake/toolchain-aarch64-linux-gnu.cmake; x86-64 hosts only)
#             without hwloc, OpenSSL and MPI (none installed for arm64), its
#             tests run under qemu-user. Emulated programs run 5-50x slower,
#             so it runs the subset aarch64_subset names (below): all of
#             test_fiber (the aarch64 context switch is this run's point) and
#             fiberswitch_small, and the parts of the other programs that
#             took under ~10 s each under qemu, without the _fifo and _fences
#             reruns: 183 ctests (170 before the token_ and cont_ parts of
#             2026-12-07, each under 1 s under qemu). On this project's 2-vCPU VM (2026-12-02)
#             the whole configuration, build included, took 119 s (tests 88
#             s) at a load average of 1-6, and 276 s (tests 188 s) at 12-18
#             from other users; the whole suite had not finished after 45
#             min at the higher load (waitgraph_graph alone grew to 9 GB
#             under qemu-user). qemu-user turns Arm loads and stores into the
#             host's, ordered as x86 orders them: this run checks the ABI, the
#             assembly and the generated code, not Arm's weaker memory order.
#   (posix, clang and m32 skip the SPIN models, label spin: they check the
#   models, not the build, and release already ran them; and the *_fifo
#   reruns of seven suites in FIFO task order: release, tsan and asan run
#   them, and they test the scheduler's order, not the platform or the
#   compiler, while keeping CI under 30 minutes on 2 cores; and the MPI
#   jobs, label mpi: libwsched_mpi uses only the core's public API, so
#   release runs the full set and tsan and asan four UTS jobs each, plus
#   every part of tests/test_mpi.c, which are short)
#   (Checks that do not depend on the configuration run where they can
#   differ: format and files (source checks), debian_package and walkthrough
#   (docs/WALKTHROUGH.md, from the packages it builds) in release only;
#   header (C11 and C++ compiles of the public headers), install and
#   subproject (consumers of the installed and the embedded library) in
#   release and clang, the two compilers; abi (the ABI against its
#   baseline, gcc's) in release. posix, tsan and asan skip them:
#   ~150 s of CI's wall time on 2 cores when they ran everywhere.)
# Usage: scripts/test.sh [release|tsan|asan|fuzz|posix|clang|m32|aarch64 ...]   (default: all eight)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(release tsan asan fuzz posix clang m32 aarch64)
# The ctests the aarch64 run runs (an extended regex over the names).
aarch64_subset='^(api|api_env_.*|fiber_.*|fiberswitch_small|tpark_(sleepers|race|runnext|yield|shutdown|outside|nest|overflow|deep|stats)|chan_(fair|close|timeout|shutdown|misuse|outside|nest|pingpong|spare)|sync_(mutex|fifo|cond|sem|wg|timeout|shutdown|spare|misuse|nest)|migrate_(moves|steal|shutdown)|slice_(bound|fifo|both|stress|nest)|deque|inject_.*|nomem|alloc_sweep|inline_join|'
aarch64_subset+='idle_(barrier|parked|wakeup|stalled|membarrier_fail)|exactly_once_(forkjoin|steals)|'
aarch64_subset+='forkjoin_(fib|nqueens|pfor|errors|wide|outside|steal|publish)|'
aarch64_subset+='future_(basic|help|timeout|misuse)|cont_(then|all|any|wide|shutdown|then_result|cancel_up)|order_.*|token_.*|'
aarch64_subset+='timer_(order|race|wake|idle|shutdown|nest|errors)|'
aarch64_subset+='io_(once|exactly|close|shutdown|nest|busy|errors)|iowait_(many|duplex|reset|close|timeout|busy|shutdown|thread|spare|errors)|'
aarch64_subset+='cancel_(before|poll|late|outside|stress|misuse|traced)|'
aarch64_subset+='reduce_(sum|extreme|misuse|errors|invoke|where)|sort_(contexts|misuse)|'
aarch64_subset+='blocking_(latch|nospares|bound|shutdown|outside|slots)|'
aarch64_subset+='waitgraph_(abc|spawnjoin|deepchain|waitjoin|crosspool|unwaited)|cpu_.*|topology_.*|'
aarch64_subset+='observe_(tracecap|profile|profprint|schedtrace)|fuzz_corpus|wsbench_small|'
aarch64_subset+='wsbench_join_cost|example_(hello|fib|image|reduce|blocking|trace|trace_check)|layers|symbols)$'
jobs=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
for c in "${configs[@]}"; do
  # The build type and sanitizer of each configuration are CMakePresets.json's
  # preset of that name (posix and clang: release); flags adds to it.
  # cc: the compiler for the build and for the tests that compile programs
  flags=() cc=() ctest_extra=() # posix, clang, m32: another platform or compiler; no second SPIN run
  case $c in
    release) preset=$c ;;
    tsan | asan) preset=$c ctest_extra=(-E '^(format|files|header)$') ;;
    fuzz)
      echo "=== fuzz: ${WS_FUZZ_SECONDS:-60} s"
      mkdir -p build
      start=$(date +%s)
      tests/fuzz/run_fuzz.sh "${WS_FUZZ_SECONDS:-60}" > build/fuzz.log 2>&1 || { tail -60 build/fuzz.log; exit 1; }
      grep -E "^(fuzz_api:|stat::number_of_executed_units|Done )" build/fuzz.log || true
      echo "=== fuzz: passed in $(( $(date +%s) - start )) s"
      continue ;;
    posix)
      preset=release flags=(-DWSCHED_PLATFORM=posix)
      # cpp_io and coro_io skip there (no poller: the C++ watches are
      # WS_ENOTSUP, an I/O wait is a poll(2)); coro_token leaves out its
      # I/O wait under a deadline, which no cancel ends without a poller.
      ctest_extra=(-LE 'spin|mpi' -E '^(format|files|header|install|subproject|debian_package|walkthrough|abi)$|_fifo$') ;;
    clang) preset=release cc=(env CC=clang) ctest_extra=(-LE 'spin|mpi' -E '^(format|files|debian_package|walkthrough)$|_fifo$') ;;
    m32)
      if [ "$(uname -m)" != x86_64 ]; then echo "=== m32: skipped (not an x86-64 host)"; continue; fi
      preset=release cc=(env "CC=gcc -m32")
      # <asm/*.h> for -m32: Debian's gcc-multilib package is only the link
      # /usr/include/asm -> x86_64-linux-gnu/asm (bi-arch headers), and it
      # conflicts with the arm64 cross compiler (scripts/deps.sh installs
      # gcc-<v>-multilib instead): without it, the same link in the build.
      if [ ! -e /usr/include/asm ] && [ -d /usr/include/x86_64-linux-gnu/asm ]; then
        mkdir -p build/m32-include
        ln -sfn /usr/include/x86_64-linux-gnu/asm build/m32-include/asm
        cc=(env "CC=gcc -m32 -isystem $PWD/build/m32-include")
      fi
      flags=(-DWSCHED_HWLOC=OFF -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON -DWSCHED_MPI=OFF)
      ctest_extra=(-LE spin -E '^(install|subproject|debian_package|walkthrough)$|_fifo$') ;;
    aarch64)
      if [ "$(uname -m)" != x86_64 ]; then echo "=== aarch64: skipped (cross-built from x86-64 hosts only)"; continue; fi
      preset=release
      flags=(-DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake -DWSCHED_HWLOC=OFF
             -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON -DWSCHED_MPI=OFF)
      ctest_extra=(-LE 'spin|mpi') ;; # and -R aarch64_subset's names, after the build
    *) echo "unknown configuration '$c' (release, tsan, asan, fuzz, posix, clang, m32, aarch64)" >&2; exit 2 ;;
  esac
  echo "=== $c: build"
  start=$(date +%s)
  "${cc[@]}" cmake --preset "$preset" -B "build/$c" -DWSCHED_WERROR=ON "${flags[@]}" > /dev/null
  cmake --build "build/$c" -j"$jobs" > "build/$c.build.log" 2>&1 || { cat "build/$c.build.log"; exit 1; }
  if [ "$c" = m32 ] && ! build/m32/tests/test_api --list > /dev/null 2>&1; then
    # Built (the compile check stands), but this kernel runs no 32-bit
    # program (ia32_emulation=off, or no CONFIG_IA32_EMULATION): say so.
    echo "=== m32: built; tests not run: this kernel cannot execute 32-bit programs"
    echo "===      ($(build/m32/tests/test_api --list 2>&1 | head -1))"
    echo "=== m32: built in $(( $(date +%s) - start )) s"
    continue
  fi
  if [ "$c" = aarch64 ]; then
    # One group of alternatives: ctest's regular expressions allow few groups.
    names=$(cd "build/$c" && ctest -N -LE 'spin|mpi' | sed -n 's/^ *Test *#[0-9]*: //p' |
              grep -E "$aarch64_subset" | paste -sd'|')
    ctest_extra+=(-R "^($names)\$")
  fi
  echo "=== $c: test"
  (cd "build/$c" && "${cc[@]}" ctest -j"$jobs" --timeout 900 --output-on-failure "${ctest_extra[@]}")
  echo "=== $c: passed in $(( $(date +%s) - start )) s"
done
echo "=== all passed: ${configs[*]}"
