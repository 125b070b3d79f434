// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//
// wsched.hpp — the C++17 API over wsched.h (issue #14). Header-only: it
// adds no symbol to libwsched; link the library as for C.
//
//   ws::pool pool(ws::pool::options{/*workers*/ 4});
//   ws::future<int> f = pool.submit([] { return 42; });
//   int v = f.get();                         // 42, or rethrows what the task threw
//   auto [a, b] = ws::join([] { return 1; }, [] { return 2; }); // inside a task
//
// Rules every piece follows:
//   - No exception ever crosses into the C library: each function the library
//     calls (a "trampoline") is noexcept and catches everything. What a task
//     throws is stored (std::exception_ptr) and rethrown by whoever collects
//     the result: future::get, join, task_group::wait, the algorithms.
//   - Errors of the C API (negative WS_E* codes) become ws::error, a
//     std::system_error whose code() is {WS_E*, ws::category()} and whose
//     what() holds ws_strerror's text.
//   - void results are ws::unit where a value is needed (join's pair).
//   - ws::join, parallel_for, parallel_reduce, parallel_invoke and
//     parallel_sort allocate nothing on the heap for their fork/join work:
//     callables and result slots live on the caller's stack (parallel_sort
//     allocates one scratch buffer per call). submit, then, when_all and
//     task_group::run allocate one shared state (or node) per call.
#ifndef WSCHED_HPP
#define WSCHED_HPP

#include "wsched.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ws
{

// ---------------------------------------------------------------------------
// Errors

namespace detail
{
class category_impl : public std::error_category
{
public:
  const char *name() const noexcept override
  {
    return "wsched";
  }
  std::string message(int code) const override
  {
    return ws_strerror(code);
  }
};
} // namespace detail

// The error category of WS_E* codes (message: ws_strerror).
inline const std::error_category &category() noexcept
{
  static const detail::category_impl c;
  return c;
}

// A WS_E* code returned by the C API: code().value() is the (negative) code.
class error : public std::system_error
{
public:
  explicit error(int code) : std::system_error(code, category(), "wsched")
  {
  }
  // The WS_E* code (WS_ECANCELED, WS_ESHUTDOWN, ...).
  int ws_code() const noexcept
  {
    return code().value();
  }
};

// The value of a void result where one is needed (ws::join's pair).
struct unit {
  friend constexpr bool operator==(unit, unit) noexcept
  {
    return true;
  }
  friend constexpr bool operator!=(unit, unit) noexcept
  {
    return false;
  }
};

namespace detail
{
inline void check(int rc)
{
  if (rc < 0)
    throw error(rc);
}

// A contract the caller broke that leaves no safe way on (as the C
// library's misuse aborts): says which on stderr and aborts.
[[noreturn]] inline void misuse(const char *what) noexcept
{
  std::fprintf(stderr, "wsched: misuse: %s\n", what);
  std::abort();
}

template <class T> using stored_t = std::conditional_t<std::is_void_v<T>, unit, T>;

// What a trampoline returns when its callable threw (the C library sees a
// failed task; the exception itself waits in the C++ state).
constexpr int threw = 1;

// Calls f() and stores its result (unit for void) into slot.
template <class R, class F> void call_into(std::optional<stored_t<R>> &slot, F &f)
{
  if constexpr (std::is_void_v<R>) {
    std::invoke(f);
    slot.emplace();
  } else {
    slot.emplace(std::invoke(f));
  }
}

// The first exception of several concurrent callables: the first to catch
// one stores it. Read only after the fork/join call or wait that ran the
// callables has returned.
struct first_exception {
  std::atomic<bool> taken{false};
  std::exception_ptr exc;

  void store(std::exception_ptr e) noexcept
  {
    // Relaxed: the exchange only elects the one writer of exc. The reader
    // runs after ws_parallel_for / ws_group_wait returned, and the library's
    // completion of those calls (release by the finishing worker, acquire by
    // the waiter) carries the write of exc to it.
    if (!taken.exchange(true, std::memory_order_relaxed))
      exc = std::move(e);
  }
  void rethrow_if_any() const
  {
    if (exc)
      std::rethrow_exception(exc);
  }
};

// f, named `label` in traces when it runs (pool::submit(label, f)).
template <class F> struct labelled {
  const char *label;
  F fn;
  decltype(auto) operator()()
  {
    (void)ws_task_label(label); // a worker runs it: cannot fail
    return std::invoke(fn);
  }
};
} // namespace detail

class pool;

// Where a call runs: a ws::pool, a ws_pool_t*, or nullptr for "the calling
// worker's pool" (the C API's NULL: WS_EINVAL outside every pool).
class pool_ref
{
public:
  pool_ref(std::nullptr_t) noexcept
  {
  }
  pool_ref(ws_pool_t *p) noexcept : p_(p)
  {
  }
  inline pool_ref(pool &p) noexcept;
  inline pool_ref(pool *p) noexcept;
  ws_pool_t *native() const noexcept
  {
    return p_;
  }

private:
  ws_pool_t *p_ = nullptr;
};

template <class T> class future;

// ---------------------------------------------------------------------------
// Futures: the shared state between a C task and its ws::future

namespace detail
{
// Owned by the C task (until it ran, or until a successful cancel) and by
// the ws::future: two references, each dropped exactly once. A task that
// never runs (cancelled; refused at submission; a continuation that could
// not be attached) has its reference dropped by whoever learned that. A
// ready_state (below) has no task: one reference, the future's.
template <class R> class state
{
public:
  state() noexcept = default;
  virtual ~state() = default;
  void drop() noexcept
  {
    // acq_rel: the release orders this owner's uses of the state before the
    // delete; the acquire of the last dropper pairs with the other owner's
    // release, so the delete sees every write (value, exc) of both.
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }
  // Written by the task before it returns; read by the future's owner after
  // ws_future_wait returned (the library orders the task's completion before
  // the waiter's return: release/acquire on the future's status).
  std::optional<stored_t<R>> value;
  std::exception_ptr exc;

protected:
  explicit state(int refs) noexcept : refs_(refs)
  {
  }

private:
  // Relaxed initialisation: the state is published to the task through
  // ws_submit / ws_future_then, which order it (the task queue's release).
  std::atomic<int> refs_{2};
};

// The state of a future whose value is known when the future is made, and
// whose native future says only when it may be taken: when_all's (its
// value is the futures it was given; its native future is ws_when_all's
// combined one). No task writes it, so the future is its only owner.
template <class R> class ready_state final : public state<R>
{
public:
  explicit ready_state(stored_t<R> &&v) : state<R>(1)
  {
    this->value.emplace(std::move(v));
  }
};

template <class R, class F> class task_state final : public state<R>
{
public:
  template <class G> explicit task_state(G &&g) : fn_(std::forward<G>(g))
  {
  }
  // The C task: runs the callable, keeps its result or exception, destroys
  // the callable (what it captured goes now, not with the future), drops
  // the task's reference.
  static int trampoline(void *arg) noexcept
  {
    auto *s = static_cast<task_state *>(arg);
    int rc = 0;
    try {
      call_into<R>(s->value, *s->fn_);
    } catch (...) {
      s->exc = std::current_exception();
      rc = threw;
    }
    s->fn_.reset();
    s->drop();
    return rc;
  }

private:
  std::optional<F> fn_;
};

// Queues fn() as a continuation of the native future ante (ws_future_then):
// the returned future is fn's. ante stays the caller's to release.
template <class R, class F> future<R> continue_native(ws_future_t *ante, F &&fn);
template <class V, class Make> future<V> when_all_future(ws_future_t *all, Make &&make);
} // namespace detail

// The result of a task submitted with pool::submit (or of then, when_all).
// Move-only; get() takes the result once, as std::future's. A future can be
// dropped at any time: the task still runs and its state goes with the last
// of the two owners.
template <class T> class future
{
  static_assert(!std::is_reference_v<T>, "ws::future<T&> is not supported: return a pointer");

public:
  future() noexcept = default;
  future(future &&o) noexcept : h_(std::exchange(o.h_, nullptr)), s_(std::exchange(o.s_, nullptr))
  {
  }
  future &operator=(future &&o) noexcept
  {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  future(const future &) = delete;
  future &operator=(const future &) = delete;
  ~future()
  {
    reset();
  }

  // True until get(), then() or a move took the result.
  bool valid() const noexcept
  {
    return h_ != nullptr;
  }
  // The C handle (still owned by this future). Wait on it or read its
  // status freely; cancel only through cancel() (a ws_future_cancel on the
  // handle would leave the task's reference to the shared state undropped).
  ws_future_t *native() const noexcept
  {
    return h_;
  }

  // Waits until the task is final (done, failed or cancelled).
  void wait() const
  {
    detail::check(ws_future_wait(need(), WS_FOREVER));
  }
  // Waits at most d: true if the task is final. Inside a task of the pool,
  // a non-zero d may run the task in place if nobody claimed it (ws_future_wait).
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period> &d) const
  {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    int rc = ws_future_wait(need(), ns > 0 ? static_cast<int64_t>(ns) : 0);
    if (rc == WS_ETIMEDOUT)
      return false;
    detail::check(rc);
    return true;
  }
  // True once the task is final (never blocks).
  bool ready() const
  {
    int st = ws_future_status(need());
    detail::check(st);
    return st >= WS_FUTURE_DONE;
  }
  // Cancels the task if no worker claimed it yet: true if it will never run
  // (get() then throws ws::error(WS_ECANCELED)); false if it already runs or
  // ran. Futures of when_all cannot be cancelled: false, always (they are
  // ws_when_all's combined future, claimed from the start).
  bool cancel()
  {
    int rc = ws_future_cancel(need());
    if (rc == WS_EBUSY)
      return false;
    detail::check(rc);
    // The task will never run: its reference is ours to drop.
    s_->drop();
    return true;
  }
  // Waits, then returns the task's value or rethrows what it threw;
  // ws::error(WS_ECANCELED) for a cancelled task. Invalidates the future.
  T get()
  {
    wait();
    int task_rc = 0;
    int rc = ws_future_result(h_, &task_rc);
    future keep(std::move(*this)); // released however we leave
    // A value present is the result whatever the native future says: a
    // task's trampoline stores one only when its callable returned (and
    // then returns 0), and a ready_state (when_all's) holds one from the
    // start, while its native future fails, or is cancelled, when one of
    // its inputs did.
    if (!keep.s_->value)
      detail::check(rc);
    if (task_rc != 0 && !keep.s_->value) {
      if (keep.s_->exc)
        std::rethrow_exception(keep.s_->exc);
      throw error(task_rc); // not one of ours
    }
    if constexpr (!std::is_void_v<T>)
      return std::move(*keep.s_->value);
  }

  // Runs f(future<T>&) as a task of the same pool once this future is final
  // (whatever its outcome: f calls get() to take the value or the
  // exception), and returns f's future. Consumes *this (valid() becomes
  // false), which the continuation owns until it ran.
  template <class F> auto then(F &&f) -> future<std::invoke_result_t<std::decay_t<F> &, future &>>
  {
    using R = std::invoke_result_t<std::decay_t<F> &, future &>;
    ws_future_t *h = need();
    return detail::continue_native<R>(
        h, [fn = std::decay_t<F>(std::forward<F>(f)), prev = std::move(*this)]() mutable -> R {
          return std::invoke(fn, prev);
        });
  }

private:
  template <class> friend class future;
  friend class pool;
  template <class R, class F> friend future<R> detail::continue_native(ws_future_t *, F &&);
  template <class V, class Make> friend future<V> detail::when_all_future(ws_future_t *, Make &&);

  future(ws_future_t *h, detail::state<T> *s) noexcept : h_(h), s_(s)
  {
  }
  ws_future_t *need() const
  {
    if (h_ == nullptr)
      throw error(WS_EINVAL);
    return h_;
  }
  void reset() noexcept
  {
    if (h_ != nullptr) {
      ws_future_release(h_);
      s_->drop();
      h_ = nullptr;
      s_ = nullptr;
    }
  }

  ws_future_t *h_ = nullptr;
  detail::state<T> *s_ = nullptr;
};

namespace detail
{
template <class R, class F> future<R> continue_native(ws_future_t *ante, F &&fn)
{
  using S = task_state<R, std::decay_t<F>>;
  auto *s = new S(std::forward<F>(fn));
  ws_future_t *next = nullptr;
  int rc = ws_future_then(ante, &S::trampoline, s, &next);
  if (rc != 0) {
    delete s; // nothing was attached: both references are ours
    throw error(rc);
  }
  return future<R>(next, s);
}

// Releases a native future on every way out of a scope.
struct native_release {
  ws_future_t *h;
  ~native_release()
  {
    ws_future_release(h);
  }
};
} // namespace detail

namespace detail
{
// when_all's first half: checks the handles and returns ws_when_all's
// combined future over them (the caller's to own), or throws.
inline ws_future_t *when_all_native(ws_future_t *const *hs, std::size_t n)
{
  for (std::size_t i = 0; i < n; i++)
    if (hs[i] == nullptr)
      throw error(WS_EINVAL);
  ws_future_t *all = nullptr;
  check(ws_when_all(hs, n, &all));
  return all;
}
// when_all's future: `all`, and a ready_state holding make()'s value (the
// inputs), made only once ws_when_all succeeded, so that a refused call
// leaves the caller's futures alone.
template <class V, class Make> future<V> when_all_future(ws_future_t *all, Make &&make)
{
  native_release guard{all};
  auto *s = new ready_state<V>(make());
  guard.h = nullptr; // the future owns it now
  return future<V>(all, s);
}
} // namespace detail

// A future of every future of v, final once each of them is: the future is
// ws_when_all's combined future, so it cannot be cancelled (cancel() returns
// false). Its value gives the futures back, each final: get() on each
// returns its value or rethrows its own exception (the combined future's own
// get() never throws for them). It can be continued with then() like any
// future. The futures must be of one pool; an empty v throws
// ws::error(WS_EINVAL) (no pool to run on).
template <class T> future<std::vector<future<T>>> when_all(std::vector<future<T>> v)
{
  std::vector<ws_future_t *> hs;
  hs.reserve(v.size());
  for (auto &f : v)
    hs.push_back(f.native());
  ws_future_t *all = detail::when_all_native(hs.data(), hs.size());
  return detail::when_all_future<std::vector<future<T>>>(all, [&v] { return std::move(v); });
}

// The same for futures of different types: a future of their tuple.
template <class... T> future<std::tuple<future<T>...>> when_all(future<T> &&...fs)
{
  static_assert(sizeof...(T) > 0, "ws::when_all needs at least one future");
  std::array<ws_future_t *, sizeof...(T)> hs{fs.native()...};
  ws_future_t *all = detail::when_all_native(hs.data(), hs.size());
  return detail::when_all_future<std::tuple<future<T>...>>(
      all, [&] { return std::tuple<future<T>...>(std::move(fs)...); });
}

// ---------------------------------------------------------------------------
// Pools

// ws_options_t's fields, every one but size (ws_options_init sets it), in
// its order and with its meaning: 0 means the default as in C (order:
// WS_ORDER_LIFO; WS_ORDER_FIFO for services, see ws_order_t). Aggregate:
// C++20 designated initializers work (ws::pool::options{.workers = 2,
// .order = WS_ORDER_FIFO}). The header check (tests/check_header.sh) fails
// when a field of ws_options_t has no namesake here or is not copied.
struct pool_options {
  unsigned workers = 0;
  ws_deque_kind_t deque = WS_DEQUE_DEFAULT;
  ws_steal_policy_t steal = WS_STEAL_DEFAULT;
  unsigned steal_batch = 0;
  unsigned spin_rounds = 0;
  uint64_t seed = 0;
  size_t stack_size = 0;
  unsigned max_spares = 0;
  unsigned spare_idle_ms = 0;
  unsigned schedtrace_ms = 0;
  bool pin = false;
  ws_order_t order = WS_ORDER_DEFAULT;
  size_t park_stack_size = 0;
  bool migrate = false;
  unsigned slice = 0;
  std::string name = std::string(); // empty: none ("ws"); the pool copies what it uses
  ws_thread_hook_fn on_thread_start = nullptr;
  ws_thread_hook_fn on_thread_exit = nullptr;
  void *hook_arg = nullptr;
};

// A pool of workers (ws_pool_create); the destructor is ws_pool_destroy:
// it waits for every accepted task. Move-only. Destroying a pool from one
// of its own tasks is a misuse the destructor cannot report (it cannot
// throw): it leaves the pool alive (ws_pool_destroy returns WS_EDEADLK).
class pool
{
public:
  using options = pool_options;

  pool() : pool(options{})
  {
  }
  explicit pool(const options &o)
  {
    ws_options_t c;
    ws_options_init(&c);
    c.workers = o.workers;
    c.deque = o.deque;
    c.steal = o.steal;
    c.steal_batch = o.steal_batch;
    c.spin_rounds = o.spin_rounds;
    c.seed = o.seed;
    c.stack_size = o.stack_size;
    c.max_spares = o.max_spares;
    c.spare_idle_ms = o.spare_idle_ms;
    c.schedtrace_ms = o.schedtrace_ms;
    c.pin = o.pin ? 1 : 0;
    c.order = o.order;
    c.park_stack_size = o.park_stack_size;
    c.migrate = o.migrate ? 1 : 0;
    c.slice = o.slice;
    c.name = o.name.empty() ? nullptr : o.name.c_str(); // read by ws_pool_create only
    c.on_thread_start = o.on_thread_start;
    c.on_thread_exit = o.on_thread_exit;
    c.hook_arg = o.hook_arg;
    detail::check(ws_pool_create(&p_, &c));
  }
  pool(pool &&o) noexcept : p_(std::exchange(o.p_, nullptr))
  {
  }
  pool &operator=(pool &&o) noexcept
  {
    if (this != &o) {
      destroy();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  pool(const pool &) = delete;
  pool &operator=(const pool &) = delete;
  ~pool()
  {
    destroy();
  }

  ws_pool_t *native() const noexcept
  {
    return p_;
  }
  unsigned workers() const
  {
    int n = ws_pool_workers(p_);
    detail::check(n);
    return static_cast<unsigned>(n);
  }
  // Stops accepting root submissions (ws_shutdown); the destructor still waits.
  void shutdown()
  {
    detail::check(ws_shutdown(p_));
  }
  // Waits until nothing is outstanding (ws_pool_wait_idle).
  void wait_idle()
  {
    detail::check(ws_pool_wait_idle(p_, WS_FOREVER));
  }

  // Runs f() as a task (a child when called from one of the pool's tasks)
  // and returns its future. One heap allocation (the shared state). Throws
  // ws::error(WS_ESHUTDOWN) once shut down (from outside the pool).
  template <class F> auto submit(F &&f) -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    using R = std::invoke_result_t<std::decay_t<F> &>;
    using S = detail::task_state<R, std::decay_t<F>>;
    auto *s = new S(std::forward<F>(f));
    ws_future_t *h = nullptr;
    int rc = ws_submit(p_, &S::trampoline, s, &h);
    if (rc != 0) {
      delete s; // nothing was queued: both references are ours
      throw error(rc);
    }
    return future<R>(h, s);
  }

  // submit(f), with the task named `label` in traces: a lambda has no
  // symbol of its own. label must stay valid until the task starts (a
  // string literal does); it is copied then, and only while tracing.
  template <class F>
  auto submit(const char *label, F &&f) -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    return submit(detail::labelled<std::decay_t<F>>{label, std::forward<F>(f)});
  }

private:
  void destroy() noexcept
  {
    if (p_ != nullptr && ws_pool_destroy(p_) == 0)
      p_ = nullptr;
  }
  ws_pool_t *p_ = nullptr;
};

inline pool_ref::pool_ref(pool &p) noexcept : p_(p.native())
{
}
inline pool_ref::pool_ref(pool *p) noexcept : p_(p != nullptr ? p->native() : nullptr)
{
}

// ---------------------------------------------------------------------------
// Fork/join

namespace detail
{
// One half of a join (or one call of parallel_invoke), on the caller's stack:
// the callable by pointer, its result or exception.
template <class F> struct call_slot {
  using R = std::invoke_result_t<F &>;
  F *fn;
  std::optional<stored_t<R>> value;
  std::exception_ptr exc;

  explicit call_slot(F &f) noexcept : fn(std::addressof(f))
  {
  }
  static int trampoline(void *arg) noexcept
  {
    auto *s = static_cast<call_slot *>(arg);
    try {
      call_into<R>(s->value, *s->fn);
      return 0;
    } catch (...) {
      s->exc = std::current_exception();
      return threw;
    }
  }
};
} // namespace detail

// Runs f() and g(), possibly in parallel (ws_join: g is offered to thieves,
// f runs now), and returns both results as a pair (ws::unit for void). No
// heap allocation. Both always run; if either throws, the join still waits
// for the other, then rethrows f's exception, else g's. p: where to run
// (nullptr, the default: the calling worker's pool; from outside a pool,
// the join is submitted to p as one root task and the caller waits).
template <class F, class G> auto join(pool_ref p, F &&f, G &&g)
{
  using FS = detail::call_slot<std::remove_reference_t<F>>;
  using GS = detail::call_slot<std::remove_reference_t<G>>;
  FS a(f);
  GS b(g);
  int rc = ws_join(p.native(), &FS::trampoline, &a, &GS::trampoline, &b);
  if (a.exc)
    std::rethrow_exception(a.exc);
  if (b.exc)
    std::rethrow_exception(b.exc);
  detail::check(rc);
  return std::pair<typename decltype(a.value)::value_type, typename decltype(b.value)::value_type>(
      std::move(*a.value), std::move(*b.value));
}
template <class F, class G> auto join(F &&f, G &&g)
{
  return join(nullptr, std::forward<F>(f), std::forward<G>(g));
}

// A group of tasks (ws_group_t): run(f) spawns f, wait() waits for all and
// rethrows the first exception one of them threw (in completion order).
// The destructor waits for children not waited for (never leaving one
// running), swallowing their exceptions. As ws_group_t: only the thread
// (task) that made the group may run() and wait(), and groups made one
// after the other in a task nest like blocks (RAII does that; a group used
// again after a wait() opens again at its next run() and nests from there).
//
// A wait() the C library refuses waits for nothing and throws ws::error:
// WS_EBUSY when a ws::join or a group opened after this group's children is
// still open (wait() inside the join's f, or with a newer group's children
// pending), WS_EINVAL from another thread than the owner. The children
// stay the group's: a later wait() (once that join or group is closed)
// or the destructor waits for them. A destructor whose wait is refused
// while children are pending cannot wait and must not free what they use:
// it aborts with "wsched: misuse: ..." (destroying a group inside a join
// opened after its children, say through std::optional::reset).
//
// cancel() is ws_group_cancel on the group's current round: children not
// started yet never start (those run() after the cancel included), running
// ones may poll ws::cancelled(), groups nested in the children are
// cancelled with it, and the wait() that ends the round returns false
// (true: no cancel, every child ran). A round runs from the construction,
// or from the first run() after a wait(), to the end of the next wait().
// A cancel() on a fresh group, or after a wait() and before the next run(),
// is not lost: it cancels the round the next run() opens (its children
// never start), and the next wait() returns false, as ws_group_wait says
// WS_ECANCELED after ws_group_cancel on a group with no child. The round
// after that starts uncancelled. Any thread may cancel, any number of
// times, until the wait() that ends the round returns: a child, or a
// thread that synchronised with the owner; a cancel() that races with that
// return is a misuse, as in C.
//
// Cost: run(f) allocates one heap node holding a copy (or move) of f,
// freed by wait() (a cancelled child never runs, so it cannot free its own).
// Why not keep f by reference: a caller's temporary lambda (the common
// `g.run([&]{...})`) would die at the end of the full expression while the
// child still runs; a per-group arena would need a bound or its own growth.
// For allocation-free fork/join use ws::join or ws::parallel_invoke, whose
// callables live on the stack.
class task_group
{
public:
  // p: the pool (nullptr: the calling worker's; ws::error(WS_EINVAL) outside
  // every pool).
  explicit task_group(pool_ref p = nullptr) : pool_(p.native())
  {
    detail::check(ws_group_init(&g_, pool_));
  }
  task_group(const task_group &) = delete;
  task_group &operator=(const task_group &) = delete;
  ~task_group()
  {
    // Relaxed: the owner's own writes (see open_). An open round is waited
    // for even with no child: a cancelled C group is counted by its pool
    // until its wait.
    if (open_.load(std::memory_order_relaxed) && refused(ws_group_wait(&g_)) && pending_)
      detail::misuse("ws::task_group destroyed where its wait is refused (inside a join or "
                     "group opened after its children): they would run on freed memory");
    free_nodes();
  }

  template <class F> void run(F &&f)
  {
    using N = node<std::decay_t<F>>;
    auto *n = new N(this, std::forward<F>(f));
    int rc = spawn(&N::trampoline, n);
    if (rc != 0) {
      delete n; // not spawned (outside the pool: WS_ESHUTDOWN, WS_ENOMEM)
      throw error(rc);
    }
    n->next = nodes_; // only the owner runs run() and wait()
    nodes_ = n;
  }
  // Waits for every child that started, then rethrows the first exception,
  // if any. Returns true, or false when the group (or one it is nested in)
  // was cancelled. Throws ws::error (WS_EBUSY or WS_EINVAL), having waited
  // for nothing and kept every child, when the C library refuses the wait
  // (see above).
  bool wait()
  {
    // Relaxed: only the owner writes open_, and this is the owner.
    if (!open_.load(std::memory_order_relaxed)) {
      // Nothing run since the last wait: g_ is not initialised, and a
      // cancel() since then only set cancel_. Relaxed: a cancel() that
      // happens before this wait returns is ordered before it (see above).
      bool cancelled = cancel_.exchange(false, std::memory_order_relaxed);
      return !cancelled && !ws_cancelled();
    }
    int rc = ws_group_wait(&g_);
    if (refused(rc))
      throw error(rc); // nothing waited for: the children, their nodes and g_ stay as they are
    // The round is over; g_ is initialised again by the next run().
    // Relaxed: a cancel() that reads open_ either happened before
    // ws_group_wait returned (it read true) or happens after this wait()
    // returned, ordered by whatever made it synchronise with the owner;
    // one that races with the return is a misuse.
    open_.store(false, std::memory_order_relaxed);
    // Relaxed: every cancel() of this round happened before ws_group_wait
    // returned (children ended; other threads synchronised), so this store
    // comes after theirs in cancel_'s modification order.
    cancel_.store(false, std::memory_order_relaxed);
    pending_ = false;
    free_nodes();
    std::exception_ptr e = std::exchange(first_.exc, nullptr);
    // Relaxed: no child runs any more (ws_group_wait returned).
    first_.taken.store(false, std::memory_order_relaxed);
    if (e)
      std::rethrow_exception(e);
    if (rc == WS_ECANCELED)
      return false;
    detail::check(rc);
    return true;
  }
  // Names the group's children in traces (ws_group_label): this round's,
  // unless it already has children, and every later round's. label must
  // outlive the group (a string literal does); nullptr removes it. Owner
  // only; costs nothing when the pool is not tracing.
  void label(const char *label) noexcept
  {
    label_ = label; // owner only
    // Relaxed: only the owner writes open_. WS_EBUSY (children already
    // spawned) leaves this round as it is.
    if (open_.load(std::memory_order_relaxed))
      (void)ws_group_label(&g_, label);
  }
  // Cancels the group's current round, or the next one if no round is
  // open (see above). Any thread, any number of times.
  void cancel() noexcept
  {
    // seq_cst store, then seq_cst load: with spawn()'s seq_cst store of
    // open_ and load of cancel_ (a Dekker pair), at least one of the two
    // sees the other's store. If this load sees the round open, g_ is
    // initialised (the store's release) and cancelled here; if it sees it
    // closed, the owner's spawn() that opens the next round sees cancel_
    // and cancels it. Both may: ws_group_cancel is idempotent.
    cancel_.store(true, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst))
      ws_group_cancel(&g_);
  }

private:
  struct node_base {
    node_base *next = nullptr;
    virtual ~node_base() = default;
  };
  template <class F> struct node final : node_base {
    task_group *g;
    F fn;
    template <class G> node(task_group *grp, G &&f) : g(grp), fn(std::forward<G>(f))
    {
    }
    static int trampoline(void *arg) noexcept
    {
      auto *n = static_cast<node *>(arg);
      try {
        std::invoke(n->fn);
      } catch (...) {
        n->g->first_.store(std::current_exception());
        return detail::threw;
      }
      return 0;
    }
  };
  // ws_group_wait's answers that mean it waited for nothing: WS_EBUSY (a
  // join or group opened after g_'s children is open) and WS_EINVAL (not
  // the owner's thread, or g_ not initialised). Every other answer (0,
  // WS_ECANCELED, a child's non-zero result) comes once every child that
  // started has ended.
  static bool refused(int rc) noexcept
  {
    return rc == WS_EBUSY || rc == WS_EINVAL;
  }
  int spawn(ws_task_fn fn, void *arg)
  {
    // Relaxed: only the owner (this thread) writes open_.
    if (!open_.load(std::memory_order_relaxed)) {
      // The first run() after a wait opens the next round. g_ is
      // initialised here, not at the end of wait(), so that the C group
      // opens (takes its frame-stack mark) where its children are spawned.
      detail::check(ws_group_init(&g_, pool_));
      if (label_ != nullptr)
        (void)ws_group_label(&g_, label_); // no child yet: cannot fail
      // seq_cst store: its release publishes g_'s initialisation to a
      // cancel() that loads open_ == true; with the seq_cst load of cancel_
      // below, the other half of the Dekker pair with cancel().
      open_.store(true, std::memory_order_seq_cst);
      if (cancel_.load(std::memory_order_seq_cst))
        ws_group_cancel(&g_); // a cancel() since the last wait: this round is cancelled
    }
    int rc = ws_group_spawn(&g_, fn, arg);
    if (rc == 0)
      pending_ = true;
    return rc;
  }
  void free_nodes() noexcept
  {
    while (nodes_ != nullptr)
      delete std::exchange(nodes_, nodes_->next);
  }

  // Who touches what. The owner (the thread or task that made the group)
  // alone calls run() and wait(): it alone writes pool_, nodes_, pending_
  // and open_, and initialises, spawns into and waits on g_. Any thread
  // (the children, or one that synchronised with the owner) may call
  // cancel(), which sets cancel_, reads open_ and calls ws_group_cancel on
  // g_ (safe beside the owner's spawns: the C library's contract); the
  // children's trampolines store into first_ (its atomic elects the writer).
  ws_group_t g_; // initialised while open_ is true
  ws_pool_t *pool_; // owner only
  node_base *nodes_ = nullptr; // owner only: every node since the last wait, newest first
  bool pending_ = false; // owner only: a child was spawned since the last wait
  const char *label_ = nullptr; // owner only: label(), given to each round
  // True from the construction to the first wait(), then from each first
  // run() after a wait() to the next wait(): a round is open and g_ holds
  // it. Written by the owner only (relaxed reads there); cancel() reads it.
  std::atomic<bool> open_{true};
  // A cancel() since the round began, or, while no round is open, for the
  // round the next run() opens. Set by cancel(), any thread; read and
  // cleared by the owner (spawn(), wait()).
  std::atomic<bool> cancel_{false};
  detail::first_exception first_;
};

// True inside a child of a cancelled group, or of a group nested in one
// (ws_cancelled).
inline bool cancelled() noexcept
{
  return ws_cancelled();
}

// Names the running task in the trace in progress (ws_task_label: copied,
// the first 255 bytes). False outside a worker; costs a thread-local load
// and a test when the pool is not tracing.
inline bool task_label(const char *label) noexcept
{
  return ws_task_label(label) == 0;
}

// ---------------------------------------------------------------------------
// Algorithms. p is where they run, as for join: nullptr means the calling
// worker's pool (ws::error(WS_EINVAL) outside every pool); from outside p
// the whole call is one root task of p and the caller waits for it.
// Exceptions: every piece still runs (as in C); the first exception caught
// is rethrown once the call finished.

namespace detail
{
template <class F> struct for_ctx {
  F *fn;
  first_exception first;

  static int body(void *ctx, int64_t lo, int64_t hi) noexcept
  {
    auto *c = static_cast<for_ctx *>(ctx);
    try {
      if constexpr (std::is_invocable_v<F &, int64_t, int64_t>) {
        std::invoke(*c->fn, lo, hi);
      } else {
        for (int64_t i = lo; i < hi; i++)
          std::invoke(*c->fn, i);
      }
      return 0;
    } catch (...) {
      c->first.store(std::current_exception());
      return threw;
    }
  }
};
} // namespace detail

// Calls f over [begin, end) in parallel (ws_parallel_for): the range form
// f(lo, hi) when f takes two int64_t, else the index form f(i), once per
// index. grain: as in C (0: about 256 pieces per worker).
template <class F>
void parallel_for(pool_ref p, int64_t begin, int64_t end, F &&f, int64_t grain = 0)
{
  using Fn = std::remove_reference_t<F>;
  static_assert(std::is_invocable_v<Fn &, int64_t, int64_t> || std::is_invocable_v<Fn &, int64_t>,
                "ws::parallel_for: f(lo, hi) or f(i)");
  detail::for_ctx<Fn> c{std::addressof(f), {}};
  int rc = ws_parallel_for(p.native(), begin, end, grain, &detail::for_ctx<Fn>::body, &c);
  c.first.rethrow_if_any();
  detail::check(rc);
}

namespace detail
{
template <class T, class B, class C> struct reduce_ctx {
  B *body;
  C *combine;
  first_exception first;

  static int run_body(void *ctx, int64_t lo, int64_t hi, void *acc) noexcept
  {
    auto *c = static_cast<reduce_ctx *>(ctx);
    try {
      T *a = std::launder(static_cast<T *>(acc));
      *a = std::invoke(*c->body, lo, hi, *a);
      return 0;
    } catch (...) {
      c->first.store(std::current_exception());
      return threw;
    }
  }
  static void run_combine(void *ctx, void *left, const void *right) noexcept
  {
    auto *c = static_cast<reduce_ctx *>(ctx);
    try {
      T *l = std::launder(static_cast<T *>(left));
      *l =
          std::invoke(*c->combine, std::as_const(*l), *std::launder(static_cast<const T *>(right)));
    } catch (...) {
      c->first.store(std::current_exception());
    }
  }
};
} // namespace detail

// Folds [begin, end) in parallel (ws_parallel_reduce): each piece starts
// from a copy of identity and computes acc = body(lo, hi, acc); pieces are
// combined as left = combine(left, right) in C's fixed tree, so the result
// is the same on every run and any pool (floating point included).
// T must be trivially copyable: the C library copies accumulators as bytes
// (memcpy of identity) and never runs constructors or destructors.
template <class T, class Body, class Combine>
T parallel_reduce(pool_ref p, int64_t begin, int64_t end, const T &identity, Body &&body,
                  Combine &&combine, int64_t grain = 0)
{
  static_assert(std::is_trivially_copyable_v<T>,
                "ws::parallel_reduce: T must be trivially copyable (accumulators are copied as "
                "bytes); fold into an index or a pointer for other types");
  static_assert(alignof(T) <= alignof(std::max_align_t), "ws::parallel_reduce: over-aligned T");
  using Ctx =
      detail::reduce_ctx<T, std::remove_reference_t<Body>, std::remove_reference_t<Combine>>;
  Ctx c{std::addressof(body), std::addressof(combine), {}};
  T result = identity;
  int rc = ws_parallel_reduce(p.native(), begin, end, grain, std::addressof(identity), sizeof(T),
                              &Ctx::run_body, &Ctx::run_combine, &c, std::addressof(result));
  c.first.rethrow_if_any();
  detail::check(rc);
  return result;
}
// The same on the calling worker's pool.
template <class T, class Body, class Combine>
T parallel_reduce(int64_t begin, int64_t end, const T &identity, Body &&body, Combine &&combine)
{
  return parallel_reduce(nullptr, begin, end, identity, std::forward<Body>(body),
                         std::forward<Combine>(combine));
}

namespace detail
{
template <class... F, std::size_t... I>
void invoke_all(ws_pool_t *p, std::index_sequence<I...>, F &...f)
{
  std::tuple<call_slot<F>...> slots{call_slot<F>(f)...};
  ws_invoke_t calls[] = {{&call_slot<F>::trampoline, &std::get<I>(slots)}...};
  int rc = ws_parallel_invoke(p, calls, sizeof...(F));
  std::exception_ptr e;
  ((e = e ? e : std::get<I>(slots).exc), ...); // the first in argument order
  if (e)
    std::rethrow_exception(e);
  check(rc);
}
template <class T>
constexpr bool is_pool_ref_v = std::is_convertible_v<T, pool_ref> && !std::is_invocable_v<T &>;
} // namespace detail

// Runs every f() once, possibly in parallel (ws_parallel_invoke), and
// returns when all have finished; results are discarded. No heap
// allocation. The first exception in argument order is rethrown.
template <class P, class... F, std::enable_if_t<detail::is_pool_ref_v<P>, int> = 0>
void parallel_invoke(P &&p, F &&...f)
{
  static_assert(sizeof...(F) > 0, "ws::parallel_invoke needs a callable");
  detail::invoke_all(pool_ref(p).native(), std::index_sequence_for<F...>{}, f...);
}
template <class F0, class... F, std::enable_if_t<!detail::is_pool_ref_v<F0>, int> = 0>
void parallel_invoke(F0 &&f0, F &&...f)
{
  detail::invoke_all(nullptr, std::index_sequence_for<F0, F...>{}, f0, f...);
}

namespace detail
{
// Stable merge sort. The elements are in x; the sorted result goes to y
// when to_y, else stays in x (y: scratch of the same length). The halves
// sort in parallel with ws::join, each into the other array, and are
// merged (std::merge: stable) into the destination; leaves use
// std::stable_sort.
template <class X, class Y, class Cmp>
void sort_rec(X x, Y y, std::size_t n, bool to_y, Cmp &cmp, std::size_t leaf)
{
  if (n <= leaf) {
    std::stable_sort(x, x + n, cmp);
    if (to_y)
      std::move(x, x + n, y);
    return;
  }
  std::size_t h = n / 2;
  auto d = static_cast<typename std::iterator_traits<X>::difference_type>(h);
  auto dn = static_cast<typename std::iterator_traits<X>::difference_type>(n);
  join([&] { sort_rec(x, y, h, !to_y, cmp, leaf); },
       [&] { sort_rec(x + d, y + d, n - h, !to_y, cmp, leaf); });
  if (to_y)
    std::merge(std::make_move_iterator(x), std::make_move_iterator(x + d),
               std::make_move_iterator(x + d), std::make_move_iterator(x + dn), y, cmp);
  else
    std::merge(std::make_move_iterator(y), std::make_move_iterator(y + d),
               std::make_move_iterator(y + d), std::make_move_iterator(y + dn), x, cmp);
}
} // namespace detail

// Sorts [first, last) stably by comp, in parallel. Implemented here on
// ws::join (not over ws_parallel_sort, whose comparator has no context
// pointer to reach comp through from the workers): leaves of at least 2048
// elements by std::stable_sort, merged by std::merge. Works for any
// move-constructible, move-assignable T (not only trivially copyable
// ones). Memory: one scratch std::vector of the n elements (moved there
// and back). comp is called from several workers at once.
template <class It, class Cmp = std::less<>>
void parallel_sort(pool_ref p, It first, It last, Cmp comp = Cmp())
{
  using T = typename std::iterator_traits<It>::value_type;
  static_assert(std::is_base_of_v<std::random_access_iterator_tag,
                                  typename std::iterator_traits<It>::iterator_category>,
                "ws::parallel_sort: random-access iterators");
  auto n = static_cast<std::size_t>(last - first);
  if (n < 2)
    return;
  std::vector<T> buf(std::make_move_iterator(first), std::make_move_iterator(last));
  unsigned w = 1;
  if (ws_pool_t *pp = p.native() != nullptr ? p.native() : ws_current_pool()) {
    int nw = ws_pool_workers(pp);
    w = nw > 0 ? static_cast<unsigned>(nw) : 1;
  }
  std::size_t leaf = std::max<std::size_t>(2048, n / (8 * std::size_t{w}));
  // Run in p: inside its task directly, from elsewhere as one root task
  // (ws_join of the sort and nothing).
  join(
      p, [&] { detail::sort_rec(buf.begin(), first, n, true, comp, leaf); }, [] {});
}
template <class It, class Cmp = std::less<>,
          std::enable_if_t<!std::is_convertible_v<It, pool_ref>, int> = 0>
void parallel_sort(It first, It last, Cmp comp = Cmp())
{
  parallel_sort(nullptr, first, last, std::move(comp));
}

// Runs f(), a call that may block, counted as blocked in the pool
// (ws_blocking: a spare worker keeps the pool at strength meanwhile), and
// returns its result or rethrows its exception.
template <class F> auto blocking(pool_ref p, F &&f)
{
  using S = detail::call_slot<std::remove_reference_t<F>>;
  S s(f);
  int rc = ws_blocking(p.native(), &S::trampoline, &s);
  if (s.exc)
    std::rethrow_exception(s.exc);
  detail::check(rc);
  if constexpr (!std::is_void_v<typename S::R>)
    return std::move(*s.value);
}

} // namespace ws

#endif // WSCHED_HPP
