#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Model-checks the SPIN models of verify/ (see verify/README.md).
#
# Usage: verify/run.sh [WORKDIR]
#   WORKDIR: where pan is generated and built (default: a temporary
#   directory, removed at the end). ctest passes a directory of the build tree.
#
# For each check: spin -a, gcc pan.c, run pan (exhaustive, safety), then
#   a correct model must report "errors: 0" with its search complete (no
#   "max search depth too small", no memory bound reached);
#   a broken variant must report errors > 0.
# Prints one line per check, then "N passed, M failed". Exit status: 0 if
# every expectation held, 1 otherwise, 77 (skip) when spin is not installed.
set -u

here=$(cd "$(dirname "$0")" && pwd)

if ! command -v spin >/dev/null 2>&1; then
  echo "spin is not installed (Debian: apt-get install spin): skipping the SPIN models"
  exit 77
fi
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "no C compiler ($cc) to build pan: skipping the SPIN models"
  exit 77
fi

if [ $# -ge 1 ]; then
  work=$1
  mkdir -p "$work" || exit 1
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# Runs at low priority: the machines that run this are shared.
nice_cmd=()
command -v nice >/dev/null 2>&1 && nice_cmd=(nice -n 10)

passed=0
failed=0

# check NAME MODEL EXPECT(pass|fail) "SPIN -D FLAGS" "PAN RUN FLAGS" [CC -O LEVEL] [PAN -D FLAGS]
check() {
  local name=$1 model=$2 expect=$3 defs=$4 runflags=$5 opt=${6:--O0} pandefs=${7:-} memlim=${8:-1024}
  local dir="$work/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/$model" "$dir/"
  local start end secs out errors states verdict detail
  start=$(date +%s.%N)
  if ! (cd "$dir" && spin -a $defs "$model" > spin.log 2>&1); then
    echo "FAIL $name: spin -a $defs $model failed:"
    sed 's/^/    /' "$dir/spin.log"
    failed=$((failed + 1))
    return
  fi
  # SAFETY: assertions and invalid end states only (no never claim).
  # MEMLIM: stay a polite neighbour; reaching it fails a correct model.
  if ! (cd "$dir" && "${nice_cmd[@]}" "$cc" "$opt" -DSAFETY -DMEMLIM=$memlim $pandefs -w -o pan pan.c \
        > cc.log 2>&1); then
    echo "FAIL $name: compiling pan failed:"
    sed 's/^/    /' "$dir/cc.log"
    failed=$((failed + 1))
    return
  fi
  (cd "$dir" && "${nice_cmd[@]}" ./pan $runflags > pan.log 2>&1)
  end=$(date +%s.%N)
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  out="$dir/pan.log"
  errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$out" | tail -1)
  states=$(awk '/states, stored/ { print $1; exit }' "$out")
  [ -z "$errors" ] && errors=unknown
  detail="errors: $errors, ${states:-?} states, ${secs} s"
  if [ "$expect" = pass ]; then
    if [ "$errors" = 0 ] && ! grep -q -e "max search depth too small" \
         -e "reached -DMEMLIM bound" -e "out of memory" "$out"; then
      verdict=PASS
      detail="verified: $detail"
    else
      verdict=FAIL
      if grep -q -e "max search depth too small" "$out"; then
        detail="search incomplete (depth bound): $detail"
      elif grep -q -e "reached -DMEMLIM bound" -e "out of memory" "$out"; then
        detail="search incomplete (memory bound): $detail"
      else
        detail="expected no error: $detail"
      fi
    fi
  else
    if [ "$errors" != unknown ] && [ "$errors" -gt 0 ]; then
      verdict=PASS
      local what
      what=$(grep -m1 -e "assertion violated" -e "invalid end state" "$out" |
             sed -e 's/^pan:[0-9]*: *//' -e 's/ (at depth.*//')
      detail="rejected as expected ($what): $detail"
    else
      verdict=FAIL
      detail="broken variant NOT rejected: $detail"
    fi
  fi
  echo "$verdict $name: $detail"
  if [ "$verdict" = PASS ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    [ "$expect" = fail ] || sed -n '1,20p' "$out" | sed 's/^/    /'
  fi
}

# Correct models (must verify) and broken variants (must be rejected).
# -m: search depth bound (the deepest paths reached are 270, 234, 122, 2502,
# and 1138 for poll.pml, 310 for term.pml, 138 for tpark.pml, 192 for chan.pml, 211 for token.pml); -E is not given: invalid end states (deadlocks) are errors.
# pan is compiled with -O0 (gcc -O2 takes longer than most searches) except
# for the two largest state spaces.
check park          park.pml   pass "" "-m10000" -O1
# COLLAPSE: the re-check's hand-off (ws__park S4) grew this search past 1 GB.
check park-3w       park.pml   pass "-DNW=3 -DNPUB=1 -DNCHILD=0" "-m10000" -O1 -DCOLLAPSE
check park-norecheck park.pml  fail "-DBROKEN=1" "-m10000"
check park-nobarrier park.pml  fail "-DBROKEN=2" "-m10000"
# GANG: each task waits until every task was taken; finds a worker that takes
# work in its re-check without handing on the search (fixed in ws__park).
check park-gang     park.pml   pass "-DGANG -DNPUB=2 -DNCHILD=0" "-m10000"
check park-gang-nohandoff park.pml fail "-DGANG -DNOFIX_S4 -DNPUB=2 -DNCHILD=0" "-m10000"

# poll.pml: the poller (timers, readiness, the I/O spare). Its state space
# grows fast with every outside thread: the configurations here take a few
# seconds each; README (poll.pml) lists the larger ones, run by hand.
check poll-2w        poll.pml   pass "-DNW=2 -DNPUB=0 -DNCHILD=1" "-m10000"
check poll-1w        poll.pml   pass "-DNW=1" "-m10000"
check poll-1w-watch  poll.pml   pass "-DNW=1 -DNPUB=0 -DNWATCH=1" "-m10000"
check poll-1w-spare  poll.pml   pass "-DNW=1 -DNPUB=0 -DIOSPARE" "-m10000"
check poll-norule-r  poll.pml   fail "-DNW=1 -DNPUB=0 -DIOSPARE -DBROKEN=1" "-m10000"
check poll-nokick    poll.pml   fail "-DNW=1 -DBROKEN=2" "-m10000"
check poll-futexwake poll.pml   fail "-DNW=1 -DBROKEN=3" "-m10000"
check poll-staledeadline poll.pml fail "-DNW=1 -DNPUB=0 -DNWATCH=1 -DBROKEN=4" "-m10000"
# LONG: a submitted task never ends (every worker inside a computation), the
# case of the I/O spare. FIX_SPARE_WINDOW and FIX_SPARE_TAKE are the code
# since the fixes of the two gaps this model found (README, Findings): with
# both it verifies; without either, as in the first version, it must fail.
# The spare's nap (a flag any worker's empty search sets) tripled this
# search: 19.2 M states, 1.0 GB with COLLAPSE, about 25 s.
check poll-long-spare  poll.pml pass "-DNW=1 -DIOSPARE -DLONG -DFIX_SPARE_WINDOW -DFIX_SPARE_TAKE" "-m10000" -O1 -DCOLLAPSE 1536
check poll-long-window poll.pml fail "-DNW=1 -DIOSPARE -DLONG" "-m10000"
check poll-long-take   poll.pml fail "-DNW=1 -DNPUB=2 -DIOSPARE -DLONG -DFIX_SPARE_WINDOW" "-m10000"

check future        future.pml pass "" "-m10000"
check future-inplace future.pml pass "-DINPLACE=1" "-m10000"
check future-storeclaim future.pml fail "-DBROKEN=1" "-m10000"
check future-nofutexcheck future.pml fail "-DBROKEN=2" "-m10000"

check frames        frames.pml pass "" "-m20000"
check frames-2thieves frames.pml pass "-DNTHIEF=2" "-m20000" -O1
check frames-nosplitcheck frames.pml fail "-DBROKEN=1" "-m20000"
check frames-nowait frames.pml fail "-DBROKEN=2" "-m20000"
check frames-newestfirst frames.pml fail "-DBROKEN=3" "-m20000"

# term.pml: termination detection between MPI ranks (issue #17, src/mpi/):
# Safra's counts and colours over waves on the binary heap of ranks.
# term-3: 3 ranks (rank 0 and its children 1 and 2), 3 tasks on rank 0, 1
# spawn, at most 2 WORK messages, 1 random request per idle period, lifeline
# rank + 1, thieves stop asking once no WORK can move. term-4: a depth-2
# tree (rank 3 is rank 1's child), the tasks on rank 1, only ranks 2 and 3
# ask for work (THIEVES=12: the full 4-rank space is too large for here).
# term-2 has steal.c's thief (2 requests, lifelines rank + 2^k, asking until
# TERM). Every broken variant is rejected in term-4's configuration (the
# colour ones need WORK between ranks other than 0: README, term.pml);
# DROP_BLACK too, by hand (time). README (term.pml) lists larger runs and
# the ring (-DRING) of the first version.
t4="-DN=4 -DINIT=1 -DU=3 -DSPAWN=0 -DTHIEVES=12"
check term-3         term.pml   pass "" "-m10000"
check term-4         term.pml   pass "$t4" "-m10000"
check term-2         term.pml   pass "-DN=2 -DW=2 -DLIFE_POW2 -DKEEP_ASKING" "-m10000"
check term-noblack   term.pml   fail "$t4 -DNO_BLACK" "-m10000"
check term-fwdactive term.pml   fail "$t4 -DFORWARD_ACTIVE" "-m10000"
check term-nocount   term.pml   fail "$t4 -DNO_COUNT" "-m10000"
check term-nowhiten  term.pml   fail "$t4 -DNO_WHITEN" "-m10000"
check term-splitsend term.pml   fail "$t4 -DSPLIT_SEND" "-m10000"
check term-earlyreport term.pml fail "$t4 -DEARLY_REPORT" "-m10000"
check term-probewhitens term.pml fail "$t4 -DPROBE_WHITENS" "-m10000"

# tpark.pml: a task parks and is readied (issue #31, src/core/tpark.c): one
# owner worker; tpark: one context that parks twice; tpark-2ctx: two
# contexts that park once each (the switch to a ready parked context or to a
# new one); each park with an event waker and a timer. EARLY publishes
# PARKED before the switch, STORE commits with a store instead of the CAS,
# UNLOCKED readies after unlocking the registry, NOBARRIER has the idle
# owner skip the re-check of its ready list. README (tpark.pml) lists the
# larger run by hand (two contexts parking twice each).
check tpark          tpark.pml  pass "" "-m10000"
check tpark-2ctx     tpark.pml  pass "-DNCTX=2 -DNPARK=1" "-m10000"
check tpark-early    tpark.pml  fail "-DEARLY" "-m10000"
check tpark-store    tpark.pml  fail "-DSTORE" "-m10000"
check tpark-unlocked tpark.pml  fail "-DUNLOCKED" "-m10000"
check tpark-nobarrier tpark.pml fail "-DNOBARRIER" "-m10000"

# migrate.pml: a parked task that may resume on another worker
# (ws_options_t.migrate, src/core/tpark.c): one context parking twice, a
# waker on another worker that takes it into its ready list or onto its
# deque, thieves, and each worker's shutdown walk. NOLOCK unlinks the
# context without its home's mig_lock, ADOPTEARLY has the waker queue a
# record it found still PARKING (the commit queues it too).
check migrate            migrate.pml pass "" "-m10000" -O1
check migrate-nolock     migrate.pml fail "-DNOLOCK" "-m10000"
check migrate-adoptearly migrate.pml fail "-DADOPTEARLY" "-m10000"

# chan.pml: channel waits (issue #32, src/api/chan.c): a timed select over
# two channels, a receive, a send, a timed send and a closer. COPYFIRST moves
# the element before the wake's CAS, NORELOCK returns from an event wake
# without taking the channel locks again. Its search holds about 4 million
# states (640 MB): -O1.
check chan           chan.pml   pass "" "-m10000" -O1
check chan-copyfirst chan.pml   fail "-DCOPYFIRST" "-m10000"
check chan-norelock  chan.pml   fail "-DNORELOCK" "-m10000"

# mutex.pml: the task-aware mutex (src/api/sync.c, Go's sync.Mutex with its
# normal and starvation modes): three lockers, two rounds each, locker 0's
# lock timed (its timer may win the wake). FASTUNLOCK clears LOCKED without
# waking a queued waiter, NOSTARVECLEAR empties the queue and leaves
# STARVING set, HANDOFFUNLOCK clears LOCKED in the starvation-mode handoff.
# The deepest path is 351; the search holds 1.9 million states (290 MB): -O1.
check mutex          mutex.pml  pass "" "-m10000" -O1
check mutex-fastunlock mutex.pml fail "-DBROKEN_FASTUNLOCK" "-m10000"
check mutex-nostarveclear mutex.pml fail "-DBROKEN_NOSTARVECLEAR" "-m10000"
check mutex-handoffunlock mutex.pml fail "-DBROKEN_HANDOFFUNLOCK" "-m10000"

# pd.pml: a task reading a byte stream through a poll descriptor (issue #32,
# src/core/netpoll.c "Parked waits", src/api/io.c ws_read): edges, the ready
# flag, the drained hint, the registration check of a parking wait. STALE
# starts with a registration close(2) took away. NOSEQ marks drained without
# looking for an edge since the read; NOCHECK parks without the check.
check pd            pd.pml     pass "-DNDATA=5" "-m10000" -O1
check pd-stale      pd.pml     pass "-DSTALE" "-m10000"
check pd-noseq      pd.pml     fail "-DNOSEQ" "-m10000"
check pd-nocheck    pd.pml     fail "-DSTALE -DNOCHECK" "-m10000"

# token.pml: cancellation tokens (issue #34, src/core/token.c): a cancel
# of P, C's deadline, C's release, a task under C parked in a cancellable
# wait (its event, its timer and the cancel race to end it), a child N
# created under P during the cancel. 6.6 million states, depth 211: -O1 and
# COLLAPSE (490 MB; 920 MB without). LISTENEARLY reads the code before
# listening under the lock, NOCHILDREF walks children without a memory
# reference, EARLYDROP drops it before cancelling the child, NEWUNLOCKED
# reads the parent's code before taking its lock, UNLISTENUNLOCKED
# unlistens without the lock.
check token          token.pml  pass "" "-m10000" -O1 -DCOLLAPSE
check token-listenearly token.pml fail "-DLISTENEARLY" "-m10000"
check token-nochildref  token.pml fail "-DNOCHILDREF" "-m10000"
check token-earlydrop   token.pml fail "-DEARLYDROP" "-m10000"
check token-newunlocked token.pml fail "-DNEWUNLOCKED" "-m10000"
check token-unlistenunlocked token.pml fail "-DUNLISTENUNLOCKED" "-m10000"
# N under C, a grandchild of P: a cancel of P overlapping C's deadline
# (3.9 million states, depth 215). NOWALKLOCK, the code before 5f85f1c (no
# cancel_walk lock), lets a cancel return while the overlapping one still
# walks below it (README, "Finding").
check token-overlap  token.pml  pass "-DNUNDERC" "-m10000" -O1 -DCOLLAPSE
check token-nowalklock token.pml fail "-DNUNDERC -DNOWALKLOCK" "-m10000"

# group.pml: a group's count with holds (ws_group_hold/ws_group_release):
# the wait returns after every child and every release (issue #34).
check group          group.pml  pass "" "-m10000"
check group-ownerhold group.pml pass "-DOWNERHOLD" "-m10000"
check group-latehold group.pml  fail "-DBROKEN=1" "-m10000"
check group-nowake   group.pml  fail "-DBROKEN=2" "-m10000"

# hold.pml: a held task (ws_task_hold/ws_task_release) against its runner,
# its waiter and ws_pool_destroy: one finish, the release's value, no use
# of a freed pool by a releaser from outside (issue #34).
check hold           hold.pml   pass "" "-m10000"
check hold-noguest   hold.pml   fail "-DBROKEN=1" "-m10000"
check hold-nokept    hold.pml   fail "-DBROKEN=2" "-m10000"
check hold-nocount   hold.pml   fail "-DBROKEN=3" "-m10000"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
