#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# ctest header: include/wsched.h, with its inline ws_join, compiles without
# a warning (-Wall -Wextra -pedantic -Werror) as C11 and, when a C++
# compiler is found, as C++17 and C++20; with WS_NO_INLINE_JOIN, ws_join is
# the library function again (not a macro) in both languages. The C++
# compiles add -Wold-style-cast (wsched.h has no C cast C++ sees), and
# include/wsched.hpp, with a use of every facility, compiles the same ways
# under g++ and clang++. ws::pool_options mirrors ws_options_t: every field
# of the C struct but size has a namesake there, in the same order, that
# ws::pool's constructor copies (c.NAME = ...o.NAME...).
# Every WS_EXTERN function of wsched.h appears in wsched.hpp: called by a
# wrapper, or named in its list of calls not wrapped, with the reason.
# With MPI's include directories (libwsched_mpi is built): include/wsched_mpi.h
# alone (it includes <mpi.h> and "wsched.h" itself), with a use of every
# declaration, compiles the same ways, C and C++, and in C++ its functions
# keep their C names (extern "C"). MPI's headers are included as system
# headers (-isystem, as CMake's MPI::MPI_C gives them): their own warnings
# (Open MPI's C++ bindings have some) are not wsched_mpi.h's.
# Usage: check_header.sh C_COMPILER SOURCE_DIR BUILD_INCLUDE_DIR [MPI_INCLUDE_DIR...]
set -euo pipefail
cc=$1
src=$2
inc=$3
shift 3
mpi_flags=()
for d in "$@"; do mpi_flags+=(-isystem "$d"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/use.c" <<'C'
#include "wsched.h"
static int half(void *arg) { return arg != 0; }
int use(void);
int use(void) { return ws_join(0, half, 0, half, 0); }
#if defined(WS_NO_INLINE_JOIN) && defined(ws_join)
#error "WS_NO_INLINE_JOIN: ws_join must not be a macro"
#endif
#if !defined(WS_NO_INLINE_JOIN) && defined(__GNUC__) && !defined(ws_join)
#error "GCC/Clang: ws_join is the inline macro"
#endif
C
cp "$work/use.c" "$work/use.cpp"
cat > "$work/usepp.cpp" <<'CPP'
#include "wsched.hpp"
#include <string>
#include <vector>
int use(ws::pool &p);
int use(ws::pool &p)
{
  ws::pool q(ws::pool::options{2});
#if __cplusplus >= 202002L
  ws::pool designated(ws::pool::options{.workers = 1, .seed = 7, .order = WS_ORDER_FIFO});
#endif
  ws::pool moved = std::move(q);
  (void)moved.native();
  (void)moved.workers();
  auto f = p.submit([] { return 1; });
  auto g = p.submit([] {});
  bool ready = f.valid() && f.wait_for(std::chrono::milliseconds(1)) && f.ready();
  g.wait();
  (void)g.cancel();
  auto h = std::move(f).then([](ws::future<int> &x) { return std::to_string(x.get()); });
  auto a = ws::when_all(std::move(g), std::move(h)).get();
  std::vector<ws::future<int>> v;
  v.push_back(p.submit([] { return 2; }));
  auto all = ws::when_all(std::move(v)).get();
  int r = p.submit([] {
             auto [x, y] = ws::join([] { return 1; }, [] {});
             (void)y;
             ws::task_group tg;
             tg.run([] {});
             tg.wait();
             ws::parallel_for(nullptr, 0, 10, [](int64_t) {});
             ws::parallel_for(nullptr, 0, 10, [](int64_t, int64_t) {}, 2);
             double d = ws::parallel_reduce(
                 0, 10, 0.0, [](int64_t lo, int64_t hi, double s) { return s + double(hi - lo); },
                 std::plus<>());
             ws::parallel_invoke([] {}, [] {});
             std::vector<std::string> vs{"b", "a"};
             ws::parallel_sort(vs.begin(), vs.end());
             return x + int(d) + ws::blocking(nullptr, [] { return 3; });
           }).get();
  ws::parallel_invoke(p, [] {}, [] {});
  auto [j1, j2] = ws::join(p, [] { return 1; }, [] { return 2; });
  std::vector<int> vi{3, 1, 2};
  ws::parallel_sort(p, vi.begin(), vi.end(), std::greater<>());
  p.shutdown();
  p.wait_idle();
  try {
    p.submit([] {});
  } catch (const ws::error &e) {
    r += e.ws_code() + (e.code().category() == ws::category());
  }
  return r + all[0].get() + static_cast<int>(std::get<1>(a).get().size()) + ready + j1 + j2;
}
int use_more(ws::pool &p);
int use_more(ws::pool &p)
{
  ws::token t;
  ws::token c = ws::token::child_of(t);
  ws::token d = ws::token::with_deadline(p, std::chrono::seconds(1), c);
  auto f1 = p.submit(ws::priority::high, [] { return 1; });
  auto f2 = p.submit(d, [] { return ws::cancelled(); }, ws::priority::normal);
  auto f3 = p.after(std::chrono::milliseconds(1), [] { return 3; });
  std::vector<std::function<int()>> batch{[] { return 4; }};
  auto f4 = p.submit_batch(std::move(batch));
  std::vector<ws::future<int>> v;
  v.push_back(std::move(f1));
  auto any = ws::when_any(std::move(v)).get();
  auto nat = ws::then_native(f3.native(), [](int s, int r) { return s + r; });
  ws::task_group g(p, ws::group_options{true, t});
  g.run([] {});
  (void)g.wait();
  int n = g.status() + g.cancel_reason() + (p.state() == WS_POOL_ACCEPTING) +
          static_cast<int>(p.slots() + p.describe().size() + p.stats().workers +
                           p.worker_stats().size());
  p.trace_start();
  p.trace_stop(nullptr);
  p.print_stats(stderr);
  ws_profile_t prof = ws::profile(p, [] {});
  ws::print_profile(prof, stderr);
  (void)p.wait_idle_for(std::chrono::seconds(1));
  ws::channel<int> ch(1);
  int x = 0;
  (void)ch.send(1);
  (void)ch.try_send(2);
  (void)ch.send_for(2, std::chrono::milliseconds(1));
  x += ch.recv().value_or(0) + (ch.try_recv(x) == ws::chan_status::ok) +
       (ch.recv_for(x, std::chrono::seconds(0)) == ws::chan_status::closed);
  auto sel = ws::select({ws::chan_case::send(&ch, x), ws::chan_case::recv(&ch, x)});
  (void)ws::select_for({ws::chan_case::recv(&ch, x)}, std::chrono::milliseconds(1));
  (void)ch.close();
  ws::mutex m;
  ws::condition_variable cv;
  {
    std::unique_lock<ws::mutex> l(m);
    (void)cv.wait_for(l, std::chrono::milliseconds(1));
    cv.notify_one();
    cv.notify_all();
  }
  ws::semaphore s(1);
  s.acquire();
  s.release();
  ws::wait_group wg;
  wg.add(1);
  wg.done();
  wg.wait();
  p.submit([] {
     ws::sleep_for(std::chrono::microseconds(1));
     ws::yield();
     if (ws::should_yield())
       ws::yield();
     ws::suspend([](ws::resume_handle r) { (void)r.resume(); });
     return ws::current_worker() + (ws::current_pool() != nullptr) + !ws::current_token();
   }).get();
  int fds[2] = {-1, -1};
  ws::io_watch w(p, fds[0], WS_IO_READ, [](unsigned) { return 0u; });
  (void)w.cancel();
  (void)w.error();
  char buf[1];
  n += static_cast<int>(ws::io_wait(fds[0], WS_IO_READ) + ws::read(fds[0], buf, 1) +
                        ws::write(fds[1], buf, 1)) +
       ws::accept(fds[0]) + ws::version();
  ws::connect(fds[0], nullptr, 0);
  ws::close(fds[0]);
  return n + x + static_cast<int>(sel.index + any.index + f4.size()) + f2.get() + nat.get() +
         t.status() + d.cancelled();
}
#if WS_HPP_COROUTINES
static ws::task<int> child()
{
  co_return 1;
}
static ws::task<void> coro(ws::pool &p, ws::channel<int> &ch, int fd)
{
  int a = co_await p.submit([] { return 1; });
  auto f = p.submit([] {});
  co_await f;
  co_await ws::delay(std::chrono::milliseconds(1));
  unsigned ev = co_await ws::io_ready(fd, WS_IO_READ);
  bool sent = co_await ws::send(ch, a);
  std::optional<int> got = co_await ws::recv(ch);
  int sum = a + static_cast<int>(ev) + sent + got.value_or(0) + co_await child();
  ch.send(sum);
}
int use_coro(ws::pool &p, ws::channel<int> &ch);
int use_coro(ws::pool &p, ws::channel<int> &ch)
{
  ws::spawn(p, coro(p, ch, 0)).get();
  return ws::spawn(nullptr, child()).get();
}
#endif
CPP
cat > "$work/use_mpi.c" <<'C'
#include "wsched_mpi.h"
static void task(ws_mpi_t *m, const void *payload, size_t len)
{
  if (ws_mpi_share(m) > 0)
    (void)ws_mpi_spawn(m, 0, payload, len);
}
int use_mpi(void);
int use_mpi(void)
{
  ws_mpi_options_t o;
  ws_mpi_options_init(&o);
  o.progress = WS_MPI_PROGRESS_THREAD;
  ws_mpi_progress_t p = WS_MPI_PROGRESS_WORKERS;
  ws_mpi_fn fn = task;
  ws_mpi_t *m;
  int rc = ws_mpi_create(&m, MPI_COMM_WORLD, &o);
  if (rc != 0)
    return rc == WS_MPI_ETHREAD || rc == WS_MPI_EMPI || rc == WS_MPI_EMISMATCH;
  int id = ws_mpi_register(m, "task", fn);
  rc = ws_mpi_spawn(m, id, NULL, 0) + ws_mpi_run(m);
  uint64_t v[1] = {0};
  rc += ws_mpi_allreduce_u64(m, v, 1, WS_MPI_SUM) + ws_mpi_allreduce_u64(m, v, 1, WS_MPI_MAX);
  ws_mpi_stats_t st;
  rc += ws_mpi_stats(m, &st);
  rc += ws_pool_workers(ws_mpi_pool(m)) + ws_mpi_rank(m) + ws_mpi_size(m);
  return rc + ws_mpi_destroy(m) + (st.tasks > 0) + (p == 0);
}
C
cp "$work/use_mpi.c" "$work/use_mpi.cpp"
# ws::pool_options against ws_options_t, field by field.
c_fields=$(sed -n '/^typedef struct ws_options {/,/^} ws_options_t;/p' "$src/include/wsched.h" |
  sed -nE 's/^  [A-Za-z_][A-Za-z0-9_]*( [A-Za-z_][A-Za-z0-9_]*)* \**([a-z_][a-z0-9_]*);.*/\2/p' |
  grep -v -x size)
cpp_fields=$(sed -n '/^struct pool_options {/,/^};/p' "$src/include/wsched.hpp" |
  sed -nE 's/^  [A-Za-z_][A-Za-z0-9_: ]* \**([a-z_][a-z0-9_]*) = .*;.*/\1/p')
[ -n "$c_fields" ] || { echo "no field of ws_options_t found in wsched.h"; exit 1; }
if [ "$c_fields" != "$cpp_fields" ]; then
  echo "ws::pool_options does not mirror ws_options_t:"
  diff <(echo "$c_fields") <(echo "$cpp_fields") || true
  exit 1
fi
for f in $c_fields; do
  grep -Eq "^ +c\.$f = .*\bo\.$f\b" "$src/include/wsched.hpp" ||
    { echo "ws::pool's constructor does not copy options field $f"; exit 1; }
done
echo "ws::pool_options mirrors the $(echo $c_fields | wc -w) fields of ws_options_t"

# Every function wsched.h exports is used by wsched.hpp, or named there
# (in its list of calls not wrapped, with the reason).
missing=""
for f in $(sed -n -E 's/^WS_EXTERN [^(]*[ *](ws_[a-z0-9_]+)\(.*/\1/p' "$src/include/wsched.h"); do
  grep -qw "$f" "$src/include/wsched.hpp" || missing="$missing $f"
done
[ -z "$missing" ] || { echo "wsched.hpp neither wraps nor names:$missing"; exit 1; }
echo "wsched.hpp covers every function of wsched.h"

# The C names of wsched_mpi.h's functions, as an object file refers to them.
mpi_fns=$(sed -n -E 's/^WS_EXTERN [^(]*[ *](ws_[a-z0-9_]+)\(.*/\1/p' "$src/include/wsched_mpi.h" | sort)
c_names() {
  local missing
  missing=$(comm -23 <(echo "$mpi_fns") <(nm "$1" | awk '$1 == "U" {print $2}' | sort))
  [ -z "$missing" ] || { echo "$1 does not call these by their C names: $(tr '\n' ' ' <<< "$missing")"; exit 1; }
}
flags=(-Wall -Wextra -pedantic -Werror -I "$src/include" -I "$inc" -c)
n=0 m=0
for def in "" "-DWS_NO_INLINE_JOIN"; do
  "$cc" -std=c11 "${flags[@]}" $def "$work/use.c" -o "$work/c.o"
  n=$((n + 1))
  if [ ${#mpi_flags[@]} -gt 0 ]; then
    "$cc" -std=c11 "${flags[@]}" "${mpi_flags[@]}" $def "$work/use_mpi.c" -o "$work/mpi.o"
    c_names "$work/mpi.o"
    m=$((m + 1))
  fi
  for cxx in g++ clang++; do
    command -v "$cxx" > /dev/null || continue
    for std in c++17 c++20; do
      "$cxx" -std=$std "${flags[@]}" -Wold-style-cast $def "$work/use.cpp" -o "$work/cxx.o"
      "$cxx" -std=$std "${flags[@]}" -Wold-style-cast $def "$work/usepp.cpp" -o "$work/cxxpp.o"
      n=$((n + 2))
      if [ ${#mpi_flags[@]} -gt 0 ]; then
        "$cxx" -std=$std "${flags[@]}" "${mpi_flags[@]}" -Wold-style-cast $def "$work/use_mpi.cpp" \
          -o "$work/cxxmpi.o"
        c_names "$work/cxxmpi.o"
        m=$((m + 1))
      fi
    done
  done
done
echo "wsched.h and wsched.hpp compiled $n ways without a warning"
[ ${#mpi_flags[@]} -eq 0 ] || echo "wsched_mpi.h compiled $m ways without a warning, its functions by their C names"
