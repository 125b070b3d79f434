// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//
// wsched.hpp — the C++17 API over wsched.h (issues #14, #34). Header-only:
// it adds no symbol to libwsched; link the library as for C. It covers the
// whole C API, in this order: errors; futures, when_all, when_any; time;
// cancellation tokens; pools (options, priorities, tokens, batches, timers,
// information, stats, traces); fork/join (join, task_group with errgroup
// and tokens); algorithms; C futures continued; the calling task (sleep,
// yield, suspend, profile); I/O (watches and the parked blocking calls);
// channels and select; mutex, condition variable, semaphore, wait group;
// with C++20, coroutines (ws::task<T>, co_await on futures, timers, I/O
// readiness and channels). The few C calls with no wrapper are listed,
// with the reason, at the end.
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
//   - Without exceptions (-fno-exceptions; WS_HPP_EXCEPTIONS is then 0):
//     the header compiles and every call behaves the same while nothing
//     fails, but where it would throw it writes "wsched: fatal: <what>:
//     <why> (built without exceptions)" to stderr and aborts (<what> is
//     "ws::error <code>" or the I/O call's name; <why> ws_strerror's or
//     strerror's text), on whichever thread it is, a worker included.
//     Terminate rather than errors as values: these errors are ones a
//     program rarely handles in place (shutdown, a cancelled token, out of
//     memory), and values would give every call a second signature. What a
//     program does expect comes back as a value in both modes: a timeout
//     (wait_for, the *_for and try_ calls: bool, optional, chan_status), a
//     closed channel (false, nullopt, chan_status::closed), a future's
//     outcome (ready(), and ws_future_status on native(), before get()), a
//     cancelled group (wait() returns false). For the rest, call the C
//     function on the native() handle, which returns the code.
//   - ws::join, parallel_for, parallel_reduce, parallel_invoke and
//     parallel_sort allocate nothing on the heap for their fork/join work:
//     callables and result slots live on the caller's stack (parallel_sort
//     allocates one scratch buffer per call). submit, then, when_all and
//     task_group::run allocate one shared state (or node) per call.
#ifndef WSCHED_HPP
#define WSCHED_HPP

// C++17 at least (if constexpr, fold expressions, std::optional, inline
// variables): say so here rather than in a template error further down.
// MSVC reports its standard in _MSVC_LANG (__cplusplus stays 199711L there
// without /Zc:__cplusplus).
#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define WS__CPLUSPLUS _MSVC_LANG
#else
#define WS__CPLUSPLUS __cplusplus
#endif
#if WS__CPLUSPLUS < 201703L
#error "wsched.hpp needs C++17 or later (-std=c++17); C code includes wsched.h instead"
#else // the whole header, so that the #error is the only error
#undef WS__CPLUSPLUS

#include "wsched.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// Coroutines: C++20 compilers that implement them (see "Coroutines" below).
#if defined(__cpp_impl_coroutine) && defined(__has_include)
#if __has_include(<coroutine>)
#define WS_HPP_COROUTINES 1
#include <coroutine>
#endif
#endif
#ifndef WS_HPP_COROUTINES
#define WS_HPP_COROUTINES 0
#endif

// Exceptions, or not. WS_HPP_EXCEPTIONS is 1 when the compiler has them
// (__cpp_exceptions, GCC's __EXCEPTIONS, MSVC's _CPPUNWIND), else 0
// (-fno-exceptions). WS__TRY and WS__CATCH_ALL are try and catch (...)
// with them; without, the try block is a plain block and the handler is
// never reached (nothing can throw).
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define WS_HPP_EXCEPTIONS 1
#define WS__TRY try
#define WS__CATCH_ALL catch (...)
#else
#define WS_HPP_EXCEPTIONS 0
#define WS__TRY if (true)
#define WS__CATCH_ALL else
#endif

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
  // With what went wrong in words (e.g. ws_options_check's field).
  error(int code, const char *what_arg) : std::system_error(code, category(), what_arg)
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

// The version of the library linked (ws_version: MAJOR * 10000 + MINOR *
// 100 + PATCH), which may differ from this header's WS_VERSION. Any thread.
inline int version() noexcept
{
  return ws_version();
}

namespace detail
{
// Without exceptions: says what would have been thrown on stderr,
// "wsched: fatal: <what>: <why> (built without exceptions)", and aborts.
[[noreturn]] inline void fatal(const char *what, const char *why) noexcept
{
  std::fprintf(stderr, "wsched: fatal: %s: %s (built without exceptions)\n", what, why);
  std::fflush(stderr);
  std::abort();
}
// Reports the WS_E* code rc as ws::error (without exceptions: fatal, with
// "ws::error <rc>" and ws_strerror's text).
[[noreturn]] inline void raise(int rc)
{
#if WS_HPP_EXCEPTIONS
  throw error(rc);
#else
  char what[32];
  std::snprintf(what, sizeof what, "ws::error %d", rc);
  fatal(what, ws_strerror(rc));
#endif
}
// Reports rc as ws::error with why in its what() (without exceptions:
// fatal, with why).
[[noreturn]] inline void raise(int rc, const char *why)
{
#if WS_HPP_EXCEPTIONS
  throw error(rc, why);
#else
  char what[32];
  std::snprintf(what, sizeof what, "ws::error %d", rc);
  fatal(what, why);
#endif
}
// Reports a negative rc as ws::error; other values are results.
inline void check(int rc)
{
  if (rc < 0)
    raise(rc);
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

// Calls f(a...) and stores its result (unit for void) into slot.
template <class R, class F, class... A>
void call_into(std::optional<stored_t<R>> &slot, F &f, A &&...a)
{
  if constexpr (std::is_void_v<R>) {
    std::invoke(f, std::forward<A>(a)...);
    slot.emplace();
  } else {
    slot.emplace(std::invoke(f, std::forward<A>(a)...));
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
// The reference count of a future's shared state. Owned by the C task
// (until it ran, or until it is known never to run) and by the ws::future:
// two references, each dropped exactly once. A task that never runs has
// its reference dropped by whoever learns that: the one whose
// ws_future_cancel succeeded, a submission that was refused, or the
// future's owner that finds the native future CANCELLED (a token, a pool's
// shutdown for a timer: discard(), below). A ready_state (below) has no
// task: one reference, the future's.
class state_base
{
public:
  state_base(const state_base &) = delete;
  state_base &operator=(const state_base &) = delete;
  virtual ~state_base() = default;
  void add_ref() noexcept
  {
    // Relaxed: the caller holds a reference, so the count cannot reach 0
    // meanwhile; whoever receives the new reference is published to by the
    // library call that hands it over (ws_future_then_result's queue).
    refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void drop() noexcept
  {
    // acq_rel: the release orders this owner's uses of the state before the
    // delete; the acquire of the last dropper pairs with the other owners'
    // releases, so the delete sees every write (value, exc) of all.
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }
  // The native future is CANCELLED: the task will never run, so its
  // reference is dropped here, once whoever calls (cancel(), the owner's
  // release, a cleanup continuation).
  virtual void discard() noexcept
  {
    // Relaxed: the exchange elects one dropper; drop() orders the rest.
    if (!discarded_.exchange(true, std::memory_order_relaxed))
      drop();
  }
  // True when something else than future::cancel may cancel the task
  // before it runs (a token, a pool's shutdown for a timer): the owner who
  // drops the future early then leaves a continuation behind that learns
  // how the task ended (let_go). Written before the state is published.
  bool foreign_cancel = false;

protected:
  explicit state_base(int refs) noexcept : refs_(refs)
  {
  }

private:
  // Relaxed initialisation: the state is published to the task through
  // ws_submit / ws_future_then, which order it (the task queue's release).
  std::atomic<int> refs_;
  std::atomic<bool> discarded_{false};
};

// The outcome of a task of result R: written by the task before it
// returns; read by the future's owner after ws_future_wait returned (the
// library orders the task's completion before the waiter's return:
// release/acquire on the future's status).
template <class R> class state : public state_base
{
public:
  std::optional<stored_t<R>> value;
  std::exception_ptr exc;

protected:
  explicit state(int refs) noexcept : state_base(refs)
  {
  }
};

// The state of a future whose value is known when the future is made, and
// whose native future says only when it may be taken: when_all's and
// when_any's (their value is the futures they were given; their native
// future is ws_when_all's or ws_when_any's combined one). No task writes
// it, so the future is its only owner, and its native future being
// CANCELLED (an input was) leaves nothing to discard.
template <class R> class ready_state final : public state<R>
{
public:
  explicit ready_state(stored_t<R> &&v) : state<R>(1)
  {
    this->value.emplace(std::move(v));
  }
  void discard() noexcept override
  {
  }
};

template <class R, class F> class task_state final : public state<R>
{
public:
  template <class G> explicit task_state(G &&g) : state<R>(2), fn_(std::forward<G>(g))
  {
  }
  // The C task (ws_task_fn with no A, ws_then_fn with two ints): runs the
  // callable with a..., keeps its result or exception, destroys the
  // callable (what it captured goes now, not with the future), drops the
  // task's reference.
  template <class... A> static int trampoline(void *arg, A... a) noexcept
  {
    auto *s = static_cast<task_state *>(arg);
    int rc = 0;
    WS__TRY
    {
      call_into<R>(s->value, *s->fn_, a...);
    }
    WS__CATCH_ALL
    {
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

// What a future's owner does with its native handle when it lets go of it
// (the future is destroyed, assigned, or get() took the result): a task
// whose native future is CANCELLED never runs, and its reference is ours
// to drop; one that may still be cancelled by someone else (foreign_cancel)
// gets a continuation that does that if it comes to it. That continuation
// cannot be had when the pool refuses it (WS_ENOMEM, or WS_ESHUTDOWN from
// outside a shut-down pool): then a task cancelled after this call keeps
// its state, and its callable, allocated (a leak, never a use after free).
inline void let_go(ws_future_t *h, state_base *s) noexcept
{
  int st = ws_future_status(h);
  if (st == WS_FUTURE_CANCELLED) {
    s->discard();
  } else if (st >= 0 && st < WS_FUTURE_DONE && s->foreign_cancel) {
    s->add_ref(); // the continuation's
    auto on_final = [](void *arg, int status, int) noexcept -> int {
      auto *t = static_cast<state_base *>(arg);
      if (status == WS_FUTURE_CANCELLED)
        t->discard();
      t->drop();
      return 0;
    };
    if (ws_future_then_result(h, on_final, s, nullptr) != 0)
      s->drop();
  }
  ws_future_release(h);
  s->drop();
}

// Makes the shared state of a task running f(a...) for a of types A (none:
// a ws_task_fn; two ints: a ws_then_fn), starts it with start(trampoline,
// state, &native) (ws_submit or one of its kind: 0, or an error code and
// nothing started) and returns its future. foreign: the task may be
// cancelled by someone else than its future (state_base::foreign_cancel).
template <class R, class... A, class F, class Start>
future<R> start_task(F &&f, bool foreign, Start &&start);
template <class V, class Make> future<V> when_all_future(ws_future_t *all, Make &&make);
// The future of native future h and state s (a reference of each is the
// future's from now on).
template <class V> future<V> adopt_future(ws_future_t *h, state<V> *s) noexcept;
} // namespace detail
template <class T> struct when_any_result;
namespace detail
{
template <class T> future<when_any_result<T>> when_any_future(std::vector<future<T>> &&v);
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
    s_->discard(); // the task will never run
    return true;
  }
  // Waits, then returns the task's value or rethrows what it threw;
  // ws::error(WS_ECANCELED) for a cancelled task. Invalidates the future.
  // Inside a task under a token the wait ends when the token is cancelled
  // (ws_future_wait): ws::error with the token's code, while the task
  // waited for may still be running.
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
      detail::raise(task_rc); // not one of ours
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
    return detail::start_task<R>(
        [fn = std::decay_t<F>(std::forward<F>(f)), prev = std::move(*this)]() mutable -> R {
          return std::invoke(fn, prev);
        },
        false,
        [h](ws_task_fn fn, void *arg, ws_future_t **next) {
          return ws_future_then(h, fn, arg, next);
        });
  }

private:
  template <class> friend class future;
  friend class pool; // submit_batch
  template <class R, class... A, class F, class Start>
  friend future<R> detail::start_task(F &&, bool, Start &&);
  template <class V, class Make> friend future<V> detail::when_all_future(ws_future_t *, Make &&);
  template <class V>
  friend future<when_any_result<V>> detail::when_any_future(std::vector<future<V>> &&);
  template <class V>
  friend future<V> detail::adopt_future(ws_future_t *, detail::state<V> *) noexcept;

  future(ws_future_t *h, detail::state<T> *s) noexcept : h_(h), s_(s)
  {
  }
  ws_future_t *need() const
  {
    if (h_ == nullptr)
      detail::raise(WS_EINVAL);
    return h_;
  }
  void reset() noexcept
  {
    if (h_ != nullptr) {
      detail::let_go(std::exchange(h_, nullptr), std::exchange(s_, nullptr));
    }
  }

  ws_future_t *h_ = nullptr;
  detail::state<T> *s_ = nullptr;
};

namespace detail
{
template <class R, class... A, class F, class Start>
future<R> start_task(F &&f, bool foreign, Start &&start)
{
  using S = task_state<R, std::decay_t<F>>;
  auto *s = new S(std::forward<F>(f));
  s->foreign_cancel = foreign;
  ws_future_t *h = nullptr;
  int rc = start(&S::template trampoline<A...>, static_cast<void *>(s), &h);
  if (rc != 0) {
    delete s; // nothing was started: both references are ours
    raise(rc);
  }
  return future<R>(h, s);
}

template <class V> future<V> adopt_future(ws_future_t *h, state<V> *s) noexcept
{
  return future<V>(h, s);
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
      raise(WS_EINVAL);
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

// when_any's value: which future became final first (its position in the
// vector given), and every future given back, in their order. The first
// one is final; the others may still run (none is cancelled).
template <class T> struct when_any_result {
  std::size_t index;
  std::vector<future<T>> futures;
};

namespace detail
{
// when_any's future: ws_when_any writes the index of the first final input
// into the value's index before the combined future is final, and the
// future's owner reads it after waiting for that future (ordered by the
// library as a task's outcome is).
template <class T> future<when_any_result<T>> when_any_future(std::vector<future<T>> &&v)
{
  std::vector<ws_future_t *> hs;
  hs.reserve(v.size());
  for (auto &f : v) {
    if (f.native() == nullptr)
      raise(WS_EINVAL);
    hs.push_back(f.native());
  }
  if (hs.empty())
    raise(WS_EINVAL);
  auto *s = new ready_state<when_any_result<T>>(when_any_result<T>{SIZE_MAX, std::move(v)});
  ws_future_t *any = nullptr;
  int rc = ws_when_any(hs.data(), hs.size(), &any, &s->value->index);
  if (rc != 0) {
    delete s; // the futures given go with it
    raise(rc);
  }
  return future<when_any_result<T>>(any, s);
}
} // namespace detail

// A future that is final as soon as one of v's futures is (ws_when_any):
// its value says which one and gives every future back (when_any_result).
// The futures must be of one pool; an empty v, or an invalid future in it,
// throws ws::error(WS_EINVAL). Like when_all's, this future cannot be
// cancelled and its get() never throws for its inputs: call get() on the
// one at index to take its value or its exception. Any thread.
template <class T> future<when_any_result<T>> when_any(std::vector<future<T>> v)
{
  return detail::when_any_future(std::move(v));
}

// ---------------------------------------------------------------------------
// Time

namespace detail
{
// d in nanoseconds for a timeout of the C API: at least 0 (a duration at
// or below zero polls once), at most INT64_MAX (the longest bounded wait).
template <class Rep, class Period> int64_t to_ns(const std::chrono::duration<Rep, Period> &d)
{
  using ns = std::chrono::duration<long double, std::nano>;
  long double v = std::chrono::duration_cast<ns>(d).count();
  if (!(v > 0))
    return 0;
  if (v >= static_cast<long double>(INT64_MAX))
    return INT64_MAX;
  return static_cast<int64_t>(v);
}
// A timed wait's rc, where WS_ETIMEDOUT and WS_EAGAIN mean "not in time":
// false for those, true for 0; throws ws::error for the rest. (A token's
// deadline that ends a timed wait says WS_ETIMEDOUT too: the C API gives
// the two the same code, so the timed forms below report it as "not in
// time"; the token's status() tells them apart.)
inline bool in_time(int rc)
{
  if (rc == WS_ETIMEDOUT || rc == WS_EAGAIN)
    return false;
  check(rc);
  return true;
}
} // namespace detail

// ---------------------------------------------------------------------------
// Cancellation tokens

class token;

// A token to put work under, not owned: a ws::token, a ws_token_t* (the C
// API's, explicit), ws::current_token(), or none (the default: what the C
// API's NULL means where it is passed).
class token_ref
{
public:
  token_ref() noexcept = default;
  explicit token_ref(ws_token_t *t) noexcept : t_(t)
  {
  }
  inline token_ref(const token &t) noexcept;
  ws_token_t *native() const noexcept
  {
    return t_;
  }
  explicit operator bool() const noexcept
  {
    return t_ != nullptr;
  }
  // 0 while live, WS_ECANCELED or WS_ETIMEDOUT once cancelled
  // (ws_token_status); ws::error(WS_EINVAL) for none. Any thread.
  int status() const
  {
    int rc = ws_token_status(t_);
    if (rc == WS_EINVAL)
      detail::raise(rc);
    return rc;
  }
  // Cancels the token and its descendants with WS_ECANCELED
  // (ws_token_cancel; a cancelled token keeps its first code). Any thread;
  // ws::error(WS_EINVAL) for none.
  void cancel() const
  {
    detail::check(ws_token_cancel(t_));
  }

private:
  ws_token_t *t_ = nullptr;
};

// A cancellation token (ws_token_t, docs/ERRORS.md): Go's context. Cancel
// it, or let its deadline pass, and the work under it (pool::submit(tok,
// f), a task_group with group_options::token, and all they submit, spawn
// and join) stops as wsched.h's "Cancellation tokens" says: tasks not
// started never start (their futures' get() throws ws::error with the
// token's code), waits return it (the wrappers below throw ws::error),
// ws::cancelled() is true in running ones. Owns one handle (released by the
// destructor; the token lives on while work holds it); move-only. Every
// member may be called from any thread.
class token
{
public:
  // A live token, with no parent. ws::error(WS_ENOMEM).
  token() : token(child_of(token_ref()))
  {
  }
  // A live token, the child of parent (cancelled with it; born cancelled if
  // it is; keeps it alive). ws::error: WS_ENOMEM, WS_EINVAL (parent not live).
  static token child_of(token_ref parent)
  {
    ws_token_t *t = nullptr;
    detail::check(ws_token_create(parent.native(), &t));
    return token(t);
  }
  // A token that a timer of p cancels d from now with WS_ETIMEDOUT
  // (ws_token_create_deadline: never early; the timer counts as an
  // outstanding task of p until it fires, and releasing the last holder of
  // the token cancels it). ws::error: WS_EINVAL (p none), WS_ENOMEM,
  // WS_ESHUTDOWN (p's timers are refused).
  template <class Rep, class Period>
  static token with_deadline(pool_ref p, const std::chrono::duration<Rep, Period> &d,
                             token_ref parent = token_ref())
  {
    ws_token_t *t = nullptr;
    detail::check(ws_token_create_deadline(p.native(), parent.native(), detail::to_ns(d), &t));
    return token(t);
  }
  // Another handle on t (ws_token_retain), this token's to release: the
  // same token, not a child. ws::error(WS_EINVAL) for none or one not live.
  static token share(token_ref t)
  {
    detail::check(ws_token_retain(t.native()));
    return token(t.native());
  }
  token(token &&o) noexcept : t_(std::exchange(o.t_, nullptr))
  {
  }
  token &operator=(token &&o) noexcept
  {
    if (this != &o)
      ws_token_release(std::exchange(t_, std::exchange(o.t_, nullptr)));
    return *this;
  }
  token(const token &) = delete;
  token &operator=(const token &) = delete;
  ~token()
  {
    ws_token_release(t_); // NULL (moved from) is ignored
  }

  ws_token_t *native() const noexcept
  {
    return t_;
  }
  // See token_ref::cancel and token_ref::status.
  void cancel() const
  {
    token_ref(t_).cancel();
  }
  int status() const
  {
    return token_ref(t_).status();
  }
  // True once cancelled (or past its deadline).
  bool cancelled() const
  {
    return status() != 0;
  }

private:
  explicit token(ws_token_t *t) noexcept : t_(t)
  {
  }
  ws_token_t *t_ = nullptr;
};

inline token_ref::token_ref(const token &t) noexcept : t_(t.native())
{
}

// The token the calling task is under (ws_current_token), borrowed: valid
// while the task runs; none outside every task, or when it is under none.
// ws::token::share(ws::current_token()) keeps it beyond the task.
inline token_ref current_token() noexcept
{
  return token_ref(ws_current_token());
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
  bool io_owned = false;
};

// A task's priority (ws_submit_ex): high-priority tasks start before every
// queued normal one, oldest first among themselves (WS_SUBMIT_HIGH).
enum class priority { normal, high };

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
    c.io_owned = o.io_owned ? 1 : 0;
    int rc = ws_pool_create(&p_, &c);
    if (rc == WS_EINVAL && ws_options_check(&c) != nullptr)
      detail::raise(rc, ws_options_check(&c)); // names the field
    detail::check(rc);
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
  // ws::error(WS_ESHUTDOWN) once shut down (from outside the pool),
  // WS_ENOMEM. Any thread. Inside a task under a token, the new task is
  // under it too (ws_submit).
  template <class F> auto submit(F &&f) -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    return submit(token_ref(), std::forward<F>(f));
  }

  // submit(f), with the task named `label` in traces: a lambda has no
  // symbol of its own. label must stay valid until the task starts (a
  // string literal does); it is copied then, and only while tracing.
  template <class F>
  auto submit(const char *label, F &&f) -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    return submit(detail::labelled<std::decay_t<F>>{label, std::forward<F>(f)});
  }

  // submit(f) at priority pr (ws_submit_ex: priority::high starts before
  // every queued normal task, on any worker).
  template <class F>
  auto submit(priority pr, F &&f) -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    return submit(token_ref(), std::forward<F>(f), pr);
  }

  // submit(f) under token t (ws_submit_token; none: the token the caller is
  // under, as submit(f)): once t is cancelled, the task does not start if it
  // has not (get() throws ws::error with t's code: WS_ECANCELED, or
  // WS_ETIMEDOUT past a deadline), and what it submits is under t too. A
  // cancelled task's callable is destroyed when its future is, or, if the
  // future was dropped before, once the library reports it cancelled.
  // ws::error: as submit, and WS_EINVAL for a token that is not live.
  template <class F>
  auto submit(token_ref t, F &&f, priority pr = priority::normal)
      -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    using R = std::invoke_result_t<std::decay_t<F> &>;
    unsigned flags = pr == priority::high ? WS_SUBMIT_HIGH : 0u;
    ws_pool_t *p = p_;
    // A token, given or inherited, may cancel the task before it runs.
    bool foreign = t || ws_current_token() != nullptr;
    return detail::start_task<R>(std::forward<F>(f), foreign,
                                 [=](ws_task_fn fn, void *arg, ws_future_t **h) {
                                   return ws_submit_token(p, fn, arg, flags, t.native(), h);
                                 });
  }

  // Submits every callable of fs as a task at once (ws_submit_batch: from
  // outside the pool they enter its queue in one step) and returns their
  // futures, in fs's order. All or nothing: on error (ws::error as submit)
  // no task was queued and fs's callables were destroyed.
  template <class F>
  auto submit_batch(std::vector<F> fs) -> std::vector<future<std::invoke_result_t<F &>>>
  {
    using R = std::invoke_result_t<F &>;
    using S = detail::task_state<R, F>;
    std::vector<std::unique_ptr<S>> states;
    states.reserve(fs.size());
    for (F &f : fs)
      states.push_back(std::make_unique<S>(std::move(f)));
    std::vector<void *> args;
    args.reserve(states.size());
    bool foreign = ws_current_token() != nullptr;
    for (auto &st : states) {
      st->foreign_cancel = foreign;
      args.push_back(st.get());
    }
    std::vector<ws_future_t *> hs(states.size(), nullptr);
    std::vector<future<R>> out;
    out.reserve(states.size());
    detail::check(
        ws_submit_batch(p_, &S::template trampoline<>, args.data(), args.size(), hs.data()));
    for (std::size_t i = 0; i < states.size(); i++) // no throw from here on
      out.push_back(future<R>(hs[i], states[i].release()));
    return out;
  }

  // Runs f() as a task of the pool no earlier than d from now (ws_after:
  // queued at the deadline like a submission from outside). The future's
  // cancel() cancels the timer until it fires. ws_shutdown cancels a timer
  // that has not fired: get() then throws ws::error(WS_ESHUTDOWN). Throws
  // ws::error: WS_ESHUTDOWN (refused from every thread once shut down),
  // WS_ENOMEM. Any thread.
  template <class F, class Rep, class Period>
  auto after(const std::chrono::duration<Rep, Period> &d, F &&f)
      -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    using R = std::invoke_result_t<std::decay_t<F> &>;
    ws_pool_t *p = p_;
    int64_t ns = detail::to_ns(d);
    return detail::start_task<R>(
        std::forward<F>(f), true,
        [=](ws_task_fn fn, void *arg, ws_future_t **h) { return ws_after(p, ns, fn, arg, h); });
  }
  // after(d, f) under token t (ws_after_token; none: the token the caller
  // is under, as after(d, f) itself): once t is cancelled, a timer that has
  // not fired leaves the pool's timers at once and get() throws ws::error
  // with t's code. ws::error: as after, and WS_EINVAL for a token that is
  // not live.
  template <class F, class Rep, class Period>
  auto after(token_ref t, const std::chrono::duration<Rep, Period> &d, F &&f)
      -> future<std::invoke_result_t<std::decay_t<F> &>>
  {
    using R = std::invoke_result_t<std::decay_t<F> &>;
    ws_pool_t *p = p_;
    int64_t ns = detail::to_ns(d);
    return detail::start_task<R>(std::forward<F>(f), true,
                                 [=](ws_task_fn fn, void *arg, ws_future_t **h) {
                                   return ws_after_token(p, ns, fn, arg, t.native(), h);
                                 });
  }

  // Waits at most d until nothing is outstanding (ws_pool_wait_idle): true
  // if so. ws::error(WS_EDEADLK) from one of the pool's tasks.
  template <class Rep, class Period> bool wait_idle_for(const std::chrono::duration<Rep, Period> &d)
  {
    return detail::in_time(ws_pool_wait_idle(p_, detail::to_ns(d)));
  }
  // Waits at most d until the pool is terminated (ws_await_termination; it
  // terminates only after shutdown()): true if so. ws::error(WS_EDEADLK)
  // from one of the pool's tasks.
  template <class Rep, class Period>
  bool await_termination(const std::chrono::duration<Rep, Period> &d)
  {
    return detail::in_time(ws_await_termination(p_, detail::to_ns(d)));
  }
  // The lifecycle state (ws_pool_state). Any thread.
  ws_pool_state_t state() const
  {
    int st = ws_pool_state(p_);
    detail::check(st);
    return static_cast<ws_pool_state_t>(st);
  }
  // Workers plus spare slots (ws_pool_slots): every ws::current_worker() of
  // the pool is below it. Any thread.
  unsigned slots() const
  {
    int n = ws_pool_slots(p_);
    detail::check(n);
    return static_cast<unsigned>(n);
  }
  // Where the pool runs, in words (ws_pool_describe). Any thread.
  std::string describe() const
  {
    int n = ws_pool_describe(p_, nullptr, 0);
    detail::check(n);
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    detail::check(ws_pool_describe(p_, out.data(), out.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
  // A snapshot of the pool's counters (ws_pool_stats). Any thread.
  ws_stats_t stats() const
  {
    ws_stats_t st;
    detail::check(ws_pool_stats(p_, &st, nullptr, 0));
    return st;
  }
  // Each slot's counters, workers first, then the spare slots (ws_pool_stats).
  std::vector<ws_worker_stats_t> worker_stats() const
  {
    std::vector<ws_worker_stats_t> per(slots());
    ws_stats_t st;
    detail::check(ws_pool_stats(p_, &st, per.data(), static_cast<unsigned>(per.size())));
    return per;
  }
  // Writes the counters as a table to out (ws_pool_stats_print).
  void print_stats(std::FILE *out) const
  {
    detail::check(ws_pool_stats_print(p_, out));
  }
  // Starts a timeline trace (ws_trace_start: max_events per worker, 0 for
  // the default). ws::error: WS_EBUSY (already tracing), WS_ENOMEM. Any thread.
  void trace_start(std::size_t max_events = 0)
  {
    detail::check(ws_trace_start(p_, max_events));
  }
  // Stops it and writes Chrome Trace Event JSON to path (nullptr: discard;
  // ws_trace_stop). ws::error: WS_EBUSY (not tracing), WS_ESYS (not
  // written). Any thread.
  void trace_stop(const char *path)
  {
    detail::check(ws_trace_stop(p_, path));
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
    WS__TRY
    {
      call_into<R>(s->value, *s->fn);
      return 0;
    }
    WS__CATCH_ALL
    {
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
// How a task_group's rounds are configured (ws_group_config), each one
// from its start.
struct group_options {
  // The errgroup behaviour (WS_GROUP_CANCEL_ON_ERROR): the first child to
  // throw cancels the round, its children not started never start, and
  // wait() rethrows that exception.
  bool cancel_on_error = false;
  // The token each round's own token is a child of (none: the token the
  // group's owner is under, if any): cancelling it cancels the round, and
  // the children are under the round's token, so what they submit is
  // reached by cancel() too (not so without group_options).
  token_ref token;
};

class task_group;
#if WS_HPP_COROUTINES
template <class T> class task;
namespace detail
{
// A task_group child that is a coroutine: started by the child (defined
// with task<T>), its end reported to the group without a waiting task.
template <class T> void run_child(task<T> &t, task_group *g);
// The group's side of it: a hold before the coroutine starts, and its end
// (what it threw, if anything) as the held child's result.
inline void group_coro_hold(task_group *g) noexcept;
inline void group_coro_end(task_group *g, std::exception_ptr e) noexcept;
template <class R> inline constexpr bool is_task = false;
template <class T> inline constexpr bool is_task<task<T>> = true;
} // namespace detail
#endif
namespace detail
{
// Whether a task_group child F is a callable that returns a ws::task<T>
// (a coroutine lambda): its node keeps the task it returns.
template <class F> constexpr bool returns_task()
{
#if WS_HPP_COROUTINES
  if constexpr (std::is_invocable_v<F &>)
    return is_task<std::invoke_result_t<F &>>;
#endif
  return false;
}
// Where a task_group node keeps the task a coroutine lambda returned
// (nothing for other children).
template <class F, bool = returns_task<F>()> struct coro_slot {
  struct type {
  };
};
template <class F> struct coro_slot<F, true> {
  using type = std::optional<std::invoke_result_t<F &>>;
};
// What a task_group child runs: f(); for a ws::task<T> (C++20) the
// coroutine (the overload defined with task<T>).
template <class F> void run_child(F &f, task_group *)
{
  std::invoke(f);
}
} // namespace detail

class task_group
{
public:
  // p: the pool (nullptr: the calling worker's; ws::error(WS_EINVAL) outside
  // every pool).
  explicit task_group(pool_ref p = nullptr) : pool_(p.native())
  {
    detail::check(ws_group_init(&g_, pool_));
  }
  // A group whose every round is configured with o (ws_group_config).
  // ws::error: as above, WS_ENOMEM, WS_EINVAL (o.token not live).
  task_group(pool_ref p, const group_options &o) : pool_(p.native()), opts_(o), configured_(true)
  {
    detail::check(ws_group_init(&g_, pool_));
    int rc = ws_group_config(&g_, flags(), opts_.token.native());
    if (rc != 0) {
      (void)ws_group_wait(&g_); // no child: returns at once
      detail::raise(rc);
    }
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

  // f: a callable taking no argument, or (C++20) a ws::task<T>: the child
  // starts the coroutine and returns, and the round lasts until it ended
  // (ws_group_hold; no task waits for it, unlike ws::spawn's); its value
  // is dropped, what it throws is the child's exception (so an errgroup's
  // cancel), and it is under the round's token (see "Tokens" under
  // Coroutines). A callable that returns a ws::task<T> (a coroutine
  // lambda) runs the task it returns, and lives until that task ended:
  // its captures stay valid across co_await, which a coroutine lambda's
  // do not when the lambda dies first (`g.run(lambda())` would be that
  // mistake).
  template <class F> void run(F &&f)
  {
    using N = node<std::decay_t<F>>;
    auto *n = new N(this, std::forward<F>(f));
    int rc = spawn(&N::trampoline, n);
    if (rc != 0) {
      delete n; // not spawned (outside the pool: WS_ESHUTDOWN, WS_ENOMEM)
      detail::raise(rc);
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
      bool cancelled = cancel_.exchange(false, std::memory_order_relaxed) || ws_cancelled();
      status_ = cancelled ? WS_FUTURE_CANCELLED : WS_FUTURE_DONE;
      reason_ = cancelled ? WS_ECANCELED : 0;
      return !cancelled;
    }
    int rc = ws_group_wait(&g_);
    if (refused(rc))
      detail::raise(rc); // nothing waited for: the children, their nodes and g_ stay as they are
    // DONE, FAILED (a child threw: rc is threw) or CANCELLED (rc says why).
    status_ = ws_group_status(&g_);
    reason_ = status_ == WS_FUTURE_CANCELLED ? rc : 0;
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
    if (status_ == WS_FUTURE_CANCELLED)
      return false;
    detail::check(rc);
    return true;
  }
  // How the last wait() found the round (ws_group_status): WS_FUTURE_DONE,
  // WS_FUTURE_FAILED (it rethrew a child's exception) or
  // WS_FUTURE_CANCELLED (it returned false); WS_EINVAL before the first
  // wait(). Owner only.
  int status() const noexcept
  {
    return status_;
  }
  // Why the last wait() returned false: WS_ECANCELED (cancel(), a
  // cancelled token or enclosing group) or WS_ETIMEDOUT (a token's
  // deadline); 0 when it did not. Owner only.
  int cancel_reason() const noexcept
  {
    return reason_;
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
#if WS_HPP_COROUTINES
  friend void detail::group_coro_hold(task_group *g) noexcept;
  friend void detail::group_coro_end(task_group *g, std::exception_ptr e) noexcept;
#endif
  struct node_base {
    node_base *next = nullptr;
    virtual ~node_base() = default;
  };
  template <class F> struct node final : node_base {
    task_group *g;
    F fn;
    // A coroutine lambda's task, made by the child: it lives here, beside
    // the lambda its frame refers to, until wait() frees the node.
    typename detail::coro_slot<F>::type coro;
    template <class G> node(task_group *grp, G &&f) : g(grp), fn(std::forward<G>(f))
    {
    }
    static int trampoline(void *arg) noexcept
    {
      auto *n = static_cast<node *>(arg);
      WS__TRY
      {
        if constexpr (detail::returns_task<F>()) {
          n->coro.emplace(std::invoke(n->fn));
          detail::run_child(*n->coro, n->g);
        } else {
          detail::run_child(n->fn, n->g);
        }
      }
      WS__CATCH_ALL
      {
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
      if (configured_) {
        int rc = ws_group_config(&g_, flags(), opts_.token.native());
        if (rc != 0) {
          (void)ws_group_wait(&g_); // no child: returns at once; the round stays closed
          return rc;
        }
      }
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
  unsigned flags() const noexcept
  {
    return opts_.cancel_on_error ? WS_GROUP_CANCEL_ON_ERROR : 0u;
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
  group_options opts_; // owner only: given to each round when configured_
  bool configured_ = false; // owner only: made with group_options
  int status_ = WS_EINVAL; // owner only: status()
  int reason_ = 0; // owner only: cancel_reason()
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

#if WS_HPP_COROUTINES
namespace detail
{
inline void group_coro_hold(task_group *g) noexcept
{
  (void)ws_group_hold(&g->g_); // g_ is open: the child that calls this runs
}
inline void group_coro_end(task_group *g, std::exception_ptr e) noexcept
{
  int rc = 0;
  if (e) {
    g->first_.store(std::move(e)); // as a child's trampoline does
    rc = threw;
  }
  (void)ws_group_release(&g->g_, rc); // g may be gone once this returns
}
} // namespace detail
#endif

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
    WS__TRY
    {
      if constexpr (std::is_invocable_v<F &, int64_t, int64_t>) {
        std::invoke(*c->fn, lo, hi);
      } else {
        for (int64_t i = lo; i < hi; i++)
          std::invoke(*c->fn, i);
      }
      return 0;
    }
    WS__CATCH_ALL
    {
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
    WS__TRY
    {
      T *a = std::launder(static_cast<T *>(acc));
      *a = std::invoke(*c->body, lo, hi, *a);
      return 0;
    }
    WS__CATCH_ALL
    {
      c->first.store(std::current_exception());
      return threw;
    }
  }
  static void run_combine(void *ctx, void *left, const void *right) noexcept
  {
    auto *c = static_cast<reduce_ctx *>(ctx);
    WS__TRY
    {
      T *l = std::launder(static_cast<T *>(left));
      *l =
          std::invoke(*c->combine, std::as_const(*l), *std::launder(static_cast<const T *>(right)));
    }
    WS__CATCH_ALL
    {
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

// ---------------------------------------------------------------------------
// Continuing a C future

// Runs fn(status, result) as a task of f's pool once the C future f is final
// (ws_future_then_result): status is its ws_future_status_t (DONE, FAILED
// or CANCELLED) and result its task's value, or why it was cancelled
// (WS_ECANCELED, WS_ETIMEDOUT, WS_ESHUTDOWN). For futures that C code made
// (ws_submit): a ws::future continues with then(). f stays the caller's to
// release, at any time. Returns fn's future. ws::error: WS_EINVAL (f
// NULL), WS_ENOMEM, WS_ESHUTDOWN. Any thread.
template <class F>
auto then_native(ws_future_t *f, F &&fn)
    -> future<std::invoke_result_t<std::decay_t<F> &, int, int>>
{
  using R = std::invoke_result_t<std::decay_t<F> &, int, int>;
  return detail::start_task<R, int, int>(std::forward<F>(fn), false,
                                         [f](ws_then_fn tr, void *arg, ws_future_t **next) {
                                           return ws_future_then_result(f, tr, arg, next);
                                         });
}

// ---------------------------------------------------------------------------
// The calling task

// The calling worker's index in its pool (ws_current_worker): below
// pool::slots(); -1 outside every pool.
inline int current_worker() noexcept
{
  return ws_current_worker();
}
// The calling worker's pool (ws_current_pool), or nullptr outside every pool.
inline ws_pool_t *current_pool() noexcept
{
  return ws_current_pool();
}

// Parks the calling task for at least d (ws_sleep); a thread outside the
// pools sleeps. ws::error(WS_ESHUTDOWN) when its pool was shut down first.
template <class Rep, class Period> void sleep_for(const std::chrono::duration<Rep, Period> &d)
{
  detail::check(ws_sleep(detail::to_ns(d)));
}

// Lets the worker's other queued work run first (ws_yield); sched_yield
// outside a pool task.
inline void yield() noexcept
{
  (void)ws_yield(); // returns 0
}

// A safe point of time slicing (ws_should_yield): true when urgent work
// waits and the calling task has used up its slice; call ws::yield() then.
inline bool should_yield() noexcept
{
  return ws_should_yield();
}

// A suspended task's handle (ws_suspend): resume() readies it, once.
class resume_handle
{
public:
  explicit resume_handle(ws_resume_t r) noexcept : r_(r)
  {
  }
  // Readies the task (ws_resume): true, or false when this handle resumes
  // nothing any more (resumed already, its wait ended by shutdown, its pool
  // destroyed). Any thread, any time; never blocks.
  bool resume() const noexcept
  {
    return ws_resume(r_) == 0;
  }
  ws_resume_t native() const noexcept
  {
    return r_;
  }

private:
  ws_resume_t r_;
};

// Parks the calling task until the handle given to f(resume_handle) is
// resumed (ws_suspend, oneTBB's suspend). f runs on the worker once the
// task is set aside: it must return promptly and must not wait; it may
// resume the handle itself or hand it to any thread. If f throws, the task
// is resumed at once and suspend() rethrows. Outside a pool task the
// thread blocks instead. ws::error(WS_ESHUTDOWN) when the pool was shut
// down first (the handle then resumes nothing).
template <class F> void suspend(F &&f)
{
  struct ctx {
    std::remove_reference_t<F> *fn;
    std::exception_ptr exc;
    static void run(void *arg, ws_resume_t r) noexcept
    {
      auto *c = static_cast<ctx *>(arg);
      WS__TRY
      {
        std::invoke(*c->fn, resume_handle(r));
      }
      WS__CATCH_ALL
      {
        c->exc = std::current_exception();
        (void)ws_resume(r); // nobody else may have it: the task must not stay parked
      }
    }
  };
  ctx c{std::addressof(f), nullptr};
  int rc = ws_suspend(&ctx::run, &c);
  if (c.exc)
    std::rethrow_exception(c.exc);
  detail::check(rc);
}

// Runs f() as a profiled region of p (ws_profile_run: work, span and
// parallelism of the fork/join work f does) and returns the profile; what f
// throws is rethrown. Outside p only. ws::error: WS_EDEADLK (inside p),
// WS_EBUSY (p profiles already), WS_EINVAL (p none).
template <class F> ws_profile_t profile(pool_ref p, F &&f)
{
  using S = detail::call_slot<std::remove_reference_t<F>>;
  S s(f);
  ws_profile_t out{};
  int fn_rc = 0;
  int rc = ws_profile_run(p.native(), &S::trampoline, &s, &out, &fn_rc);
  if (s.exc)
    std::rethrow_exception(s.exc);
  detail::check(rc);
  return out;
}
// Prints a profile and its speedup bounds up to max_workers (0: 64) to out
// (ws_profile_print).
inline void print_profile(const ws_profile_t &p, std::FILE *out, unsigned max_workers = 0)
{
  detail::check(ws_profile_print(&p, out, max_workers));
}

// ---------------------------------------------------------------------------
// I/O. Each call keeps the contract of its wsched.h namesake; a failed
// POSIX-style call throws std::system_error with errno in the generic
// category (EBADF: ws::close closed the descriptor during the wait;
// ESHUTDOWN: the pool was shut down; EBUSY: another task waits the same
// way on it). A cancelled token ends the waits of read, write, accept and
// connect with ECANCELED, or ETIMEDOUT for its deadline (the errno the C
// calls set; io_wait throws ws::error with the token's code).

namespace detail
{
// Reports errno as a std::system_error (without exceptions: fatal, with
// what and strerror's text).
[[noreturn]] inline void raise_errno(const char *what)
{
#if WS_HPP_EXCEPTIONS
  throw std::system_error(errno, std::generic_category(), what);
#else
  fatal(what, std::strerror(errno));
#endif
}
} // namespace detail

// Waits until fd is ready for events (WS_IO_READ and/or WS_IO_WRITE),
// parking the task (ws_io_wait): returns the events ready (WS_IO_HUP and
// WS_IO_ERROR included). ws::error: WS_ESHUTDOWN, WS_ECLOSED (ws::close
// closed fd), WS_EBUSY, WS_ENOMEM, WS_ESYS, WS_EINVAL, and a cancelled
// token's code. Any thread.
inline unsigned io_wait(int fd, unsigned events)
{
  int rc = ws_io_wait(fd, events, WS_FOREVER);
  detail::check(rc);
  return static_cast<unsigned>(rc);
}
// The same, waiting at most d: 0 when fd was not ready in time.
template <class Rep, class Period>
unsigned io_wait(int fd, unsigned events, const std::chrono::duration<Rep, Period> &d)
{
  int rc = ws_io_wait(fd, events, detail::to_ns(d));
  return detail::in_time(rc) ? static_cast<unsigned>(rc) : 0u;
}

// read(2) that parks the task while fd has nothing (ws_read): the bytes
// read, 0 at end of file. Any thread.
inline std::size_t read(int fd, void *buf, std::size_t n)
{
  ssize_t r = ws_read(fd, buf, n);
  if (r < 0)
    detail::raise_errno("ws::read");
  return static_cast<std::size_t>(r);
}
// Writes all n bytes, parking the task while fd has no room (ws_write):
// returns n, or fewer when an error came after some bytes were written (it
// comes again at the next call). Any thread.
inline std::size_t write(int fd, const void *buf, std::size_t n)
{
  ssize_t r = ws_write(fd, buf, n);
  if (r < 0)
    detail::raise_errno("ws::write");
  return static_cast<std::size_t>(r);
}
// accept(2) that parks the task until a connection comes (ws_accept):
// the new descriptor, non-blocking and close-on-exec. Any thread.
inline int accept(int fd, struct sockaddr *addr = nullptr, socklen_t *addrlen = nullptr)
{
  int c = ws_accept(fd, addr, addrlen);
  if (c < 0)
    detail::raise_errno("ws::accept");
  return c;
}
// connect(2) of a non-blocking socket that parks the task until the
// connection is made (ws_connect); its error (ECONNREFUSED, ...) is thrown.
inline void connect(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
  if (ws_connect(fd, addr, addrlen) != 0)
    detail::raise_errno("ws::connect");
}
// Ends the waits of p's tasks on fd, cancels p's watch armed on it, and
// closes it (ws_close; p none: the calling task's pool, or plain close(2)
// from a thread outside the pools). close(2)'s failure is thrown.
inline void close(int fd, pool_ref p = nullptr)
{
  if (ws_close(p.native(), fd) != 0)
    detail::raise_errno("ws::close");
}

// A watch of one descriptor (ws_io_watch): once fd is ready for the events
// asked, handler(revents) runs as a task of the pool; what it returns is
// the events to watch next (0: none; the watch is one-shot: it fires once
// per arming). Move-only; the destructor cancels the watch if it is armed
// and releases it (a handler already queued still runs, and the callable
// lives until it ended). The library never closes fd. If the handler
// throws, the watch stays disarmed and error() returns the exception.
class io_watch
{
public:
  // Arms the watch. ws::error: WS_EINVAL (bad fd or events, p none),
  // WS_EBUSY (another watch of p is armed on fd), WS_ESHUTDOWN, WS_ENOMEM,
  // WS_ENOTSUP (no epoll), WS_ESYS (the kernel refused fd). Any thread.
  template <class F>
  io_watch(pool_ref p, int fd, unsigned events, F &&handler)
      : io_watch(p, token_ref(), fd, events, std::forward<F>(handler))
  {
  }
  // The same under token t (ws_io_watch_token; none: the token the caller
  // is under, as the constructor above): t's cancel cancels the watch as
  // cancel() does, and the handlers run under t. ws::error: as above, and
  // WS_EINVAL for a token that is not live.
  template <class F> io_watch(pool_ref p, token_ref t, int fd, unsigned events, F &&handler)
  {
    static_assert(
        std::is_convertible_v<std::invoke_result_t<std::decay_t<F> &, unsigned>, unsigned>,
        "ws::io_watch: handler(unsigned revents) returns the events to watch next");
    using S = state_of<std::decay_t<F>>;
    auto *s = new S(std::forward<F>(handler)); // refs: ours and the arming's
    int rc = ws_io_watch_token(p.native(), fd, events, &S::trampoline, s, t.native(), &io_);
    if (rc != 0) {
      delete s;
      detail::raise(rc);
    }
    s_ = s;
  }
  io_watch(io_watch &&o) noexcept
      : io_(std::exchange(o.io_, nullptr)), s_(std::exchange(o.s_, nullptr))
  {
  }
  io_watch &operator=(io_watch &&o) noexcept
  {
    if (this != &o) {
      reset();
      io_ = std::exchange(o.io_, nullptr);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  io_watch(const io_watch &) = delete;
  io_watch &operator=(const io_watch &) = delete;
  ~io_watch()
  {
    reset();
  }

  // Cancels the watch for good (ws_io_cancel): true when it was armed and
  // no handler will run for that arming; false when its handler was
  // queued, runs or ran (it runs to its end, and arms no more), or it was
  // cancelled already. Owner only.
  bool cancel() noexcept
  {
    if (s_ == nullptr)
      return false;
    s_->closing.store(true, std::memory_order_seq_cst); // see base::trampoline_end
    return s_->cancel(io_) == 0;
  }
  // The exception the handler threw, if it did (then the watch stays
  // disarmed). Owner only.
  std::exception_ptr error() const noexcept
  {
    // Acquire: pairs with the handler's release store of failed.
    return s_ != nullptr && s_->failed.load(std::memory_order_acquire) ? s_->exc : nullptr;
  }
  ws_io_t *native() const noexcept
  {
    return io_;
  }

private:
  // Who touches what: the owner (the io_watch) makes the state, cancels,
  // releases and reads error(); the handler tasks run the callable and arm
  // again. An arming fires once and only the handler it ran makes the next
  // one, after its callable returned: so callables never overlap, while a
  // handler's end (trampoline_end) may overlap the next handler. The state
  // lives while the owner holds it, an arming is outstanding, or a
  // handler re-arms (refs).
  struct base {
    // Owner: 1; an arming not yet consumed by its handler or a cancel: 1;
    // a handler re-arming: 1 of its own until it returns.
    std::atomic<int> refs{2};
    // Set by the owner before it cancels: a handler that armed again after
    // that cancels its own arming (so that one of the two sees the other).
    std::atomic<bool> closing{false};
    std::atomic<bool> failed{false}; // exc is written (release by the handler)
    std::exception_ptr exc; // the handler's exception, written once before failed
    // Orders our ws_io_cancel and ws_io_rearm calls, so that `settled` is
    // read and written in the order of the watch's states.
    std::mutex m;
    // Under m: the watch is cancelled for good and its last arming's
    // reference is accounted for (dropped, or left to its handler).
    bool settled = false;

    virtual ~base() = default;
    void drop() noexcept
    {
      // acq_rel: as state_base::drop.
      if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
        delete this;
    }
    // ws_io_cancel, and the reference of the arming it ends. Its first
    // answer after which the watch is final tells: 0, it was armed and no
    // handler comes (dropped here); WS_EBUSY, it had fired: its handler
    // drops or re-arms (a failed re-arm dropped already); WS_ECANCELED,
    // ws_shutdown cancelled it while armed (dropped here): every other way
    // to that state went through here or through rearm(), which settle it.
    int cancel(ws_io_t *io) noexcept
    {
      bool ours = false;
      int rc;
      {
        std::lock_guard<std::mutex> l(m);
        rc = ws_io_cancel(io);
        ours = !settled && rc != WS_EBUSY;
        settled = settled || rc == 0 || rc == WS_EBUSY || rc == WS_ECANCELED;
      }
      if (ours)
        drop();
      return rc;
    }
    // A handler's ws_io_rearm, with a reference for the new arming (dropped
    // again when it fails).
    void rearm(ws_io_t *io, unsigned events) noexcept
    {
      refs.fetch_add(1, std::memory_order_relaxed); // relaxed: the handler holds one
      int rc;
      {
        std::lock_guard<std::mutex> l(m);
        rc = ws_io_rearm(io, events);
        // Cancelled (by our cancel, or now by shutdown): final, and this
        // arming, never made, is dropped below.
        if (rc == WS_ECANCELED || rc == WS_ESHUTDOWN)
          settled = true;
      }
      if (rc != 0)
        drop();
    }
    // The end of a handler: arms again for next (non-zero) unless the owner
    // is closing, then drops the reference of the arming it consumed.
    void trampoline_end(ws_io_t *io, unsigned next) noexcept
    {
      if (next != 0 && !closing.load(std::memory_order_seq_cst)) {
        rearm(io, next);
        // seq_cst load after the arming: with the owner's seq_cst store of
        // closing before its cancel, either the owner's cancel finds this
        // arming or this load sees closing and cancels it.
        if (closing.load(std::memory_order_seq_cst))
          (void)cancel(io);
      }
      drop();
    }
  };
  template <class F> struct state_of final : base {
    F fn;
    template <class G> explicit state_of(G &&g) : fn(std::forward<G>(g))
    {
    }
    static int trampoline(void *arg, int, unsigned revents, ws_io_t *io) noexcept
    {
      auto *s = static_cast<state_of *>(arg);
      unsigned next = 0;
      int rc = 0;
      WS__TRY
      {
        next = static_cast<unsigned>(std::invoke(s->fn, revents));
      }
      WS__CATCH_ALL
      {
        // Relaxed: only this handler runs; the first exception is kept.
        if (!s->failed.load(std::memory_order_relaxed)) {
          s->exc = std::current_exception();
          s->failed.store(true, std::memory_order_release); // pairs with error()'s acquire
        }
        rc = detail::threw;
      }
      s->trampoline_end(io, next);
      return rc;
    }
  };
  void reset() noexcept
  {
    if (s_ != nullptr) {
      (void)cancel();
      ws_io_release(std::exchange(io_, nullptr));
      std::exchange(s_, nullptr)->drop();
    }
  }

  ws_io_t *io_ = nullptr;
  base *s_ = nullptr;
};

// ---------------------------------------------------------------------------
// Channels

// What a channel operation did: ok (sent, or received), closed (the
// channel is closed; for a receive, also drained: nothing moved), or
// not_ready (a try or timed call that would have had to wait longer).
enum class chan_status { ok, closed, not_ready };

// A channel of T values between tasks and threads (ws_chan_t, Go's chan):
// FIFO; capacity 0 is unbuffered (a send waits for its receiver). A task
// that has to wait parks; a thread blocks. Each value is delivered exactly
// once. T must be trivially copyable (the library copies it as bytes).
// Move-only; the destructor frees the channel and what it still buffers
// (ws_chan_destroy), and aborts with "wsched: misuse: ..." while a call
// waits on it. Every member but the destructor may be called from any
// thread. A closed channel is an answer (false, nullopt,
// chan_status::closed), not an error, so that a program built without
// exceptions ends its loops on it. Errors (ws::error): WS_ESHUTDOWN (a
// task whose pool was shut down), a cancelled token's code (WS_ECANCELED,
// WS_ETIMEDOUT); nothing moved then.
template <class T> class channel
{
  static_assert(std::is_trivially_copyable_v<T>,
                "ws::channel<T>: T must be trivially copyable (values are copied as bytes)");
  static_assert(std::is_default_constructible_v<T>,
                "ws::channel<T>: T must be default-constructible");

public:
  // ws::error: WS_ENOMEM, WS_EINVAL (capacity too large for memory).
  explicit channel(std::size_t capacity = 0)
  {
    detail::check(ws_chan_create(sizeof(T), capacity, &c_));
  }
  channel(channel &&o) noexcept : c_(std::exchange(o.c_, nullptr))
  {
  }
  channel &operator=(channel &&o) noexcept
  {
    if (this != &o) {
      destroy();
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  channel(const channel &) = delete;
  channel &operator=(const channel &) = delete;
  ~channel()
  {
    destroy();
  }

  // Sends v, waiting while there is no room (ws_chan_send): true, or false
  // when the channel is closed (v was not sent).
  bool send(const T &v)
  {
    return sent_or_closed(ws_chan_send(c_, std::addressof(v)));
  }
  // Sends v only if that needs no wait (ws_chan_try_send).
  chan_status try_send(const T &v)
  {
    return closed_or(ws_chan_try_send(c_, std::addressof(v)));
  }
  // Sends v, waiting at most d for room (ws_chan_send_timeout).
  template <class Rep, class Period>
  chan_status send_for(const T &v, const std::chrono::duration<Rep, Period> &d)
  {
    return closed_or(ws_chan_send_timeout(c_, std::addressof(v), detail::to_ns(d)));
  }
  // Receives a value, waiting while there is none (ws_chan_recv): nullopt
  // once the channel is closed and drained.
  std::optional<T> recv()
  {
    T v;
    if (!sent_or_closed(ws_chan_recv(c_, std::addressof(v))))
      return std::nullopt;
    return v;
  }
  // Receives a value into out only if that needs no wait (ws_chan_try_recv);
  // out is written only for chan_status::ok.
  chan_status try_recv(T &out)
  {
    return closed_or(ws_chan_try_recv(c_, std::addressof(out)));
  }
  // Receives a value into out, waiting at most d (ws_chan_recv_timeout).
  template <class Rep, class Period>
  chan_status recv_for(T &out, const std::chrono::duration<Rep, Period> &d)
  {
    return closed_or(ws_chan_recv_timeout(c_, std::addressof(out), detail::to_ns(d)));
  }
  // Closes the channel (ws_chan_close): sends fail from now on, receivers
  // get what is buffered, then WS_ECLOSED. False if it was closed already.
  bool close()
  {
    int rc = ws_chan_close(c_);
    if (rc == WS_ECLOSED)
      return false;
    detail::check(rc);
    return true;
  }
  // Values buffered now (a snapshot; 0 for an unbuffered channel).
  std::size_t size() const noexcept
  {
    return ws_chan_len(c_);
  }
  ws_chan_t *native() const noexcept
  {
    return c_;
  }

private:
  // A channel call's rc as a chan_status; throws ws::error for the rest.
  static chan_status closed_or(int rc)
  {
    if (rc == WS_ECLOSED)
      return chan_status::closed;
    return detail::in_time(rc) ? chan_status::ok : chan_status::not_ready;
  }
  // The same for a call without a timeout, where WS_ETIMEDOUT can only be
  // a token's deadline: an error.
  static bool sent_or_closed(int rc)
  {
    if (rc == WS_ECLOSED)
      return false;
    detail::check(rc);
    return true;
  }
  void destroy() noexcept
  {
    if (ws_chan_destroy(std::exchange(c_, nullptr)) == WS_EBUSY)
      detail::misuse("ws::channel destroyed while a send, receive or select waits on it");
  }
  ws_chan_t *c_ = nullptr;
};

// One case of ws::select: a send of a value or a receive into a variable,
// on a channel (nullptr: never ready, Go's nil channel). The value sent
// and the variable must outlive the select.
class chan_case
{
public:
  template <class T> static chan_case send(channel<T> *c, const T &v) noexcept
  {
    // The library only reads a send case's element.
    return chan_case(c != nullptr ? c->native() : nullptr, WS_CHAN_SEND,
                     const_cast<T *>(std::addressof(v)));
  }
  // out is written only when this case is chosen and received a value.
  template <class T> static chan_case recv(channel<T> *c, T &out) noexcept
  {
    return chan_case(c != nullptr ? c->native() : nullptr, WS_CHAN_RECV, std::addressof(out));
  }
  const ws_chan_case_t &native() const noexcept
  {
    return c_;
  }

private:
  chan_case(ws_chan_t *c, unsigned op, void *elem) noexcept : c_{c, op, elem, 0}
  {
  }
  ws_chan_case_t c_;
};

// The case a select performed: its index among the cases, and whether its
// channel was closed (a send that did not send, a receive of nothing).
struct select_result {
  std::size_t index;
  bool closed;
};

namespace detail
{
inline std::optional<select_result> select_native(std::initializer_list<chan_case> cases,
                                                  int64_t timeout_ns)
{
  std::array<ws_chan_case_t, WS_CHAN_SELECT_MAX> cs;
  if (cases.size() > cs.size())
    raise(WS_EINVAL);
  std::size_t n = 0;
  for (const chan_case &c : cases)
    cs[n++] = c.native();
  int rc = ws_chan_select(cs.data(), n, timeout_ns);
  if (!in_time(rc < 0 ? rc : 0))
    return std::nullopt;
  auto i = static_cast<std::size_t>(rc);
  return select_result{i, cs[i].result == WS_ECLOSED};
}
} // namespace detail

// Waits until one of the cases can proceed, performs it and says which
// (ws_chan_select, Go's select: one of those ready, chosen at random). At
// most WS_CHAN_SELECT_MAX cases. ws::error as channel's, and WS_EINVAL.
inline select_result select(std::initializer_list<chan_case> cases)
{
  std::optional<select_result> r = detail::select_native(cases, WS_FOREVER);
  if (!r)
    detail::raise(WS_ETIMEDOUT); // without a timeout, only a token's deadline ends the wait
  return *r;
}
// The same, waiting at most d (0: Go's default case): nullopt if no case
// was ready in time.
template <class Rep, class Period>
std::optional<select_result> select_for(std::initializer_list<chan_case> cases,
                                        const std::chrono::duration<Rep, Period> &d)
{
  return detail::select_native(cases, detail::to_ns(d));
}

// ---------------------------------------------------------------------------
// Mutexes, condition variables, semaphores, wait groups: the pthread
// objects for tasks (wsched.h): a task that has to wait parks, a thread
// blocks. Neither copyable nor movable (the C objects must not move while
// in use); they are not tied to a pool. Every member may be called from any
// thread; a destructor that finds the object in use aborts with "wsched:
// misuse: ...". Waits other than mutex locks end with ws::error on
// WS_ESHUTDOWN (a task's pool shut down) and a cancelled token's code.

namespace detail
{
// The base of the objects below: neither copyable nor movable.
class pinned
{
public:
  pinned() noexcept = default;
  pinned(const pinned &) = delete;
  pinned &operator=(const pinned &) = delete;
};
// A destructor's ws_*_destroy answer: WS_EBUSY (in use) is a misuse.
inline void destroyed(int rc, const char *what) noexcept
{
  if (rc == WS_EBUSY)
    misuse(what);
}
} // namespace detail

// A mutex (ws_mutex_t, Go's sync.Mutex): Lockable, so std::lock_guard and
// std::unique_lock work with it. Not recursive; any thread may unlock it.
class mutex : detail::pinned
{
public:
  mutex() noexcept
  {
    (void)ws_mutex_init(&m_); // fails only for NULL
  }
  ~mutex()
  {
    detail::destroyed(ws_mutex_destroy(&m_), "ws::mutex destroyed while locked or waited for");
  }
  void lock()
  {
    detail::check(ws_mutex_lock(&m_));
  }
  bool try_lock()
  {
    return detail::in_time(ws_mutex_trylock(&m_));
  }
  template <class Rep, class Period> bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
  {
    return detail::in_time(ws_mutex_lock_timeout(&m_, detail::to_ns(d)));
  }
  // ws::error(WS_EINVAL) when not locked.
  void unlock()
  {
    detail::check(ws_mutex_unlock(&m_));
  }
  ws_mutex_t *native() noexcept
  {
    return &m_;
  }

private:
  ws_mutex_t m_;
};

// A condition variable used with a ws::mutex (ws_cond_t). No spurious
// wakeups, but check the condition in a loop (or use the predicate form).
// Every wait holds the mutex again when it returns or throws.
class condition_variable : detail::pinned
{
public:
  condition_variable() noexcept
  {
    (void)ws_cond_init(&c_); // fails only for NULL
  }
  ~condition_variable()
  {
    detail::destroyed(ws_cond_destroy(&c_), "ws::condition_variable destroyed while waited on");
  }
  // Unlocks l's mutex (held), waits for a notify, locks it again (ws_cond_wait).
  void wait(std::unique_lock<mutex> &l)
  {
    detail::check(ws_cond_wait(&c_, l.mutex()->native()));
  }
  template <class Pred> void wait(std::unique_lock<mutex> &l, Pred pred)
  {
    while (!pred())
      wait(l);
  }
  // Waits at most d: false if no notify came in time.
  template <class Rep, class Period>
  bool wait_for(std::unique_lock<mutex> &l, const std::chrono::duration<Rep, Period> &d)
  {
    return detail::in_time(ws_cond_wait_timeout(&c_, l.mutex()->native(), detail::to_ns(d)));
  }
  void notify_one() noexcept
  {
    (void)ws_cond_signal(&c_); // fails only for NULL
  }
  void notify_all() noexcept
  {
    (void)ws_cond_broadcast(&c_); // fails only for NULL
  }

private:
  ws_cond_t c_;
};

// A counting semaphore (ws_sem_t): a release with waiters hands its unit to
// the longest waiting one.
class semaphore : detail::pinned
{
public:
  explicit semaphore(unsigned value = 0) noexcept
  {
    (void)ws_sem_init(&s_, value); // fails only for NULL
  }
  ~semaphore()
  {
    detail::destroyed(ws_sem_destroy(&s_), "ws::semaphore destroyed while waited on");
  }
  // Takes a unit, waiting while there is none (ws_sem_wait).
  void acquire()
  {
    detail::check(ws_sem_wait(&s_));
  }
  bool try_acquire()
  {
    return detail::in_time(ws_sem_trywait(&s_));
  }
  template <class Rep, class Period>
  bool try_acquire_for(const std::chrono::duration<Rep, Period> &d)
  {
    return detail::in_time(ws_sem_wait_timeout(&s_, detail::to_ns(d)));
  }
  // Adds a unit (ws_sem_post). ws::error(WS_EINVAL) at WS_SEM_VALUE_MAX.
  void release()
  {
    detail::check(ws_sem_post(&s_));
  }
  // The value now (a snapshot).
  unsigned value() noexcept
  {
    return ws_sem_value(&s_);
  }

private:
  ws_sem_t s_;
};

// A wait group (ws_waitgroup_t, Go's sync.WaitGroup): waits return when its
// counter is 0; what a task did before its done() is visible to them.
class wait_group : detail::pinned
{
public:
  wait_group() noexcept
  {
    (void)ws_waitgroup_init(&w_); // fails only for NULL
  }
  ~wait_group()
  {
    detail::destroyed(ws_waitgroup_destroy(&w_), "ws::wait_group destroyed while waited on");
  }
  // Adds delta, which may be negative (ws_waitgroup_add). ws::error(WS_EINVAL)
  // when the counter would leave [0, WS_WAITGROUP_MAX] (nothing changed).
  void add(int delta = 1)
  {
    detail::check(ws_waitgroup_add(&w_, delta));
  }
  void done()
  {
    detail::check(ws_waitgroup_done(&w_));
  }
  // Waits until the counter is 0 (ws_waitgroup_wait).
  void wait()
  {
    detail::check(ws_waitgroup_wait(&w_));
  }
  // Waits at most d: false if the counter was not 0 in time.
  template <class Rep, class Period> bool wait_for(const std::chrono::duration<Rep, Period> &d)
  {
    return detail::in_time(ws_waitgroup_wait_timeout(&w_, detail::to_ns(d)));
  }

private:
  ws_waitgroup_t w_;
};

// ---------------------------------------------------------------------------
// Coroutines (C++20: built when the compiler implements them,
// __cpp_impl_coroutine, and has <coroutine>; WS_HPP_COROUTINES is then 1).
//
//   ws::task<int> answer(ws::channel<int> &ch)
//   {
//     co_await ws::delay(std::chrono::milliseconds(5));      // a timer
//     int a = co_await pool.submit([] { return 40; });        // a future
//     std::optional<int> b = co_await ws::recv(ch);           // a channel
//     co_return a + b.value_or(0);
//   }
//   int v = ws::spawn(pool, answer(ch)).get();
//
// A ws::task<T> is a coroutine that runs on a pool's workers: spawn()
// starts it as a task of the pool and gives its ws::future<T>; inside one,
// co_await on another task<U> runs it and resumes the awaiter when it ends
// (symmetric transfer: a chain of any depth uses no stack). While it is
// suspended a coroutine holds no worker and no stack: each co_await below
// arranges for it to be resumed by a task of the pool once what it awaits
// is there. Each co_await must be made on a worker (inside a task<T>, that
// is always so). What a coroutine throws is rethrown where its result is
// taken (the awaiter's co_await, or the future's get()).
//
// Tokens. A coroutine is under the token its spawn() task is under (a
// task_group's round token, pool::submit(tok, ...)'s, or one inherited);
// a task<U> it awaits is under the same. Its waits on channels, I/O and
// timers listen to that token as the C calls do: a cancel (or deadline)
// ends a pending one with ws::error(the token's code), and one begun after
// it throws at once; a co_await on a future or a task throws at once after
// the cancel too, but one already pending waits for its future. The steps
// of a coroutine are tasks of their own, and a task under a cancelled
// token never starts (wsched.h): so a step that the token kept from
// starting is run anyway, by a continuation under no token (never lost:
// the coroutine ends, and no value it received is dropped). Steps that run
// after a future, a timer or such a continuation are under no token:
// there ws::cancelled() is false and work they submit or spawn does not
// inherit the token, while their waits still listen to it.

#if WS_HPP_COROUTINES

template <class T = void> class task; // (declared before task_group too)

namespace detail
{
// Resumes the coroutine whose address arg is: the body of the pool tasks
// that co_await's arrangements submit.
inline int resume_task(void *arg) noexcept
{
  std::coroutine_handle<>::from_address(arg).resume();
  return 0;
}
// Submits fn(arg) as a task of the calling worker's pool under tok, a
// coroutine's token (nullptr: none). A task under a token that is
// cancelled before it starts never starts (wsched.h): for a coroutine's
// step that would lose the coroutine, so under a token the task has a
// future, and on_end (a ws_then_fn: continuations are under no token and
// always run) is told how it ended and runs the step itself when the
// future was CANCELLED. Returns 0, or the code of a refused submission
// (nothing runs then). A continuation that cannot be made after the task
// was (out of memory) while the task can no longer be recalled aborts:
// whether the step will run is then unknowable.
inline int submit_step(ws_token_t *tok, ws_task_fn fn, void *arg, ws_then_fn on_end) noexcept
{
  ws_pool_t *p = ws_current_pool();
  if (tok == nullptr)
    return ws_submit(p, fn, arg, nullptr);
  ws_future_t *f = nullptr;
  int rc = ws_submit_token(p, fn, arg, 0, tok, &f);
  if (rc != 0)
    return rc;
  rc = ws_future_then_result(f, on_end, arg, nullptr);
  if (rc != 0 && ws_future_cancel(f) != 0)
    misuse("ws::task: no memory for the continuation of a coroutine's step under a token");
  ws_future_release(f);
  return rc;
}

// The token the coroutine of handle c is under: its promise's for a
// task<T>, else the calling task's.
struct promise_base;
template <class P> ws_token_t *token_of(std::coroutine_handle<P> c) noexcept
{
  if constexpr (std::is_base_of_v<promise_base, P>)
    return c.promise().token;
  else
    return ws_current_token();
}

// What a task<T>'s promise keeps besides its result: who is told when the
// coroutine ends. Written before the coroutine starts, by whatever starts
// it; read by its steps (each one ordered after the one before by the
// library's task hand-offs).
struct promise_base {
  std::coroutine_handle<> continuation; // the awaiting coroutine, if any
  std::exception_ptr exc;
  // A task_group child's coroutine (run_child): the group its end is
  // reported to.
  task_group *group = nullptr;
  // A spawn() root (start_root): the hold on its task's end that the
  // coroutine's end releases (ws_task_release), and that future's state,
  // a state<T> whose value the end fills (one of its two references).
  ws_hold_t *hold = nullptr;
  state_base *root = nullptr;
  // The token the coroutine is under (see "Tokens" above): borrowed from
  // the awaiting coroutine or the group's child, which outlive it; a
  // spawn() root's own handle (ws_token_retain), released at its end.
  ws_token_t *token = nullptr;

  std::suspend_always initial_suspend() noexcept
  {
    return {};
  }
  // At the end: the awaiting coroutine runs next, or spawn()'s task is told.
  struct final_awaiter {
    bool await_ready() noexcept
    {
      return false;
    }
    template <class P> std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept
    {
      P &p = h.promise();
      if (p.continuation)
        return p.continuation;
      if (p.group != nullptr) { // the group frees the frame after its wait
        group_coro_end(p.group, std::move(p.exc));
        return std::noop_coroutine();
      }
      // A spawn() root: the result goes to the future's state, the frame
      // goes, and the release makes the future final (its release orders
      // the result before the future's get()).
      auto *s = static_cast<state<typename P::result_type> *>(p.root);
      int rc = 0;
      if (p.exc) {
        s->exc = std::move(p.exc);
        rc = threw;
      } else {
        s->value = std::move(p.value);
      }
      ws_hold_t *hold = p.hold;
      ws_token_t *tok = p.token;
      h.destroy(); // suspended at its end: nothing of it is read after
      ws_token_release(tok); // NULL (under none) is ignored
      s->drop(); // the coroutine's reference; the future's keeps the value
      (void)ws_task_release(hold, rc);
      return std::noop_coroutine();
    }
    void await_resume() noexcept
    {
    }
  };
  final_awaiter final_suspend() noexcept
  {
    return {};
  }
  void unhandled_exception() noexcept
  {
#if WS_HPP_EXCEPTIONS
    exc = std::current_exception();
#endif
  }
};

template <class T> struct promise : promise_base {
  using result_type = T;
  std::optional<stored_t<T>> value;
  task<T> get_return_object() noexcept;
  template <class U> void return_value(U &&v)
  {
    value.emplace(std::forward<U>(v));
  }
};
template <> struct promise<void> : promise_base {
  using result_type = void;
  std::optional<unit> value;
  task<void> get_return_object() noexcept;
  void return_void() noexcept
  {
    value.emplace();
  }
};
template <class T> class spawn_state;
} // namespace detail

// A coroutine of result T that runs on a pool (see above). Lazy: it starts
// when spawned or awaited. Move-only; destroying a task that never started
// frees its frame (a started one is owned by its awaiter until it ended; a
// spawned one by itself: its end frees it).
template <class T> class task
{
public:
  using promise_type = detail::promise<T>;

  task(task &&o) noexcept : h_(std::exchange(o.h_, nullptr))
  {
  }
  task &operator=(task &&o) noexcept
  {
    if (this != &o) {
      if (h_)
        h_.destroy();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  task(const task &) = delete;
  task &operator=(const task &) = delete;
  ~task()
  {
    if (h_)
      h_.destroy(); // not started, or ended: never suspended midway here
  }

  // co_await t inside another task: runs t, resumes the awaiter when it
  // ended, and gives its value (or rethrows its exception).
  auto operator co_await() &&noexcept
  {
    return awaiter{h_};
  }

private:
  // (A member class, not a local one: await_suspend is a template, to
  // reach the awaiting coroutine's promise.)
  struct awaiter {
    std::coroutine_handle<promise_type> h;
    bool await_ready() noexcept
    {
      return false;
    }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> parent) noexcept
    {
      h.promise().token = detail::token_of(parent);
      h.promise().continuation = parent;
      return h; // symmetric transfer: starts t on this stack frame's place
    }
    T await_resume()
    {
      return take(h.promise());
    }
  };
  template <class> friend struct detail::promise;
  template <class> friend class detail::spawn_state;
  template <class U> friend void detail::run_child(task<U> &t, task_group *g);

  explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h)
  {
  }
  static T take(promise_type &p)
  {
    if (p.exc)
      std::rethrow_exception(p.exc);
    if constexpr (!std::is_void_v<T>)
      return std::move(*p.value);
  }

  std::coroutine_handle<promise_type> h_;
};

namespace detail
{
template <class T> task<T> promise<T>::get_return_object() noexcept
{
  return task<T>(std::coroutine_handle<promise<T>>::from_promise(*this));
}
inline task<void> promise<void>::get_return_object() noexcept
{
  return task<void>(std::coroutine_handle<promise<void>>::from_promise(*this));
}
} // namespace detail

namespace detail
{
// The state of a spawn() future: the coroutine until its task starts it
// (a task cancelled first destroys it unstarted, with the state), then the
// coroutine's result, filled by its end. Two references: the future's, and
// the task's, which the coroutine takes over.
template <class T> class spawn_state final : public state<T>
{
public:
  explicit spawn_state(task<T> &&t) noexcept : state<T>(2), t_(std::move(t))
  {
  }
  // spawn()'s task: holds its own end (ws_task_hold), hands it, the state
  // and a handle on its token to the coroutine, starts it and returns. The
  // coroutine's end releases the hold (final_awaiter), so no task waits
  // for a spawned coroutine.
  static int start(void *arg) noexcept
  {
    auto *s = static_cast<spawn_state *>(arg);
    ws_hold_t *hold = nullptr;
    if (ws_task_hold(&hold) != 0) // a heap task with a future: cannot fail
      misuse("ws::spawn: the task that starts a coroutine could not be held");
    auto h = std::exchange(s->t_.h_, nullptr); // the frame is the coroutine's own now
    auto &p = h.promise();
    p.hold = hold;
    p.root = s;
    p.token = ws_current_token(); // held by this task: live
    if (p.token != nullptr)
      (void)ws_token_retain(p.token);
    h.resume();
    return 0; // not the result: the release gives it
  }

private:
  task<T> t_;
};
} // namespace detail

// Starts t as a task of p (nullptr: the calling worker's pool) and returns
// its future, which is final once the coroutine ended: get() gives its
// co_return value or rethrows what it threw. The task that starts it runs
// its first steps and returns; the steps after each co_await are tasks of
// their own, and no task waits for the coroutine (ws_task_hold: the task's
// future is made final by the coroutine's end; the pool counts the
// coroutine as outstanding until then). Cancelling the future before that
// task started destroys the coroutine unstarted. Its get() inside a task
// under a token is a wait the token's cancel ends (future::get) while the
// coroutine, cancelled too, is still on its way to its end: to wait for
// that end whatever happens, run the coroutine as a task_group child (the
// group's wait is not interrupted) or wait outside the token. ws::error
// as pool::submit. Any thread.
template <class T> future<T> spawn(pool_ref p, task<T> t)
{
  ws_pool_t *pp = p.native() != nullptr ? p.native() : ws_current_pool();
  auto *s = new detail::spawn_state<T>(std::move(t));
  s->foreign_cancel = ws_current_token() != nullptr; // a token may cancel the task
  ws_future_t *h = nullptr;
  int rc = ws_submit(pp, &detail::spawn_state<T>::start, s, &h);
  if (rc != 0) {
    delete s; // nothing was started: both references are ours
    detail::raise(rc);
  }
  return detail::adopt_future<T>(h, s);
}

namespace detail
{
// A task_group child that is a coroutine (task_group::run): the child
// holds the group for it and starts it, then returns; the coroutine's end
// releases the hold (final_awaiter), so no task waits for it. Its token is
// the child's, which outlives it: the round's (held until the group's wait
// returns, after every release) or the owner's (the owner is in that wait).
template <class T> void run_child(task<T> &t, task_group *g)
{
  auto &p = t.h_.promise();
  p.token = ws_current_token();
  p.group = g;
  group_coro_hold(g); // before the start: it may end within resume()
  t.h_.resume();
}

// The common part of the awaiters below: the suspended coroutine, and the
// code of what ended its wait (0, or a WS_E* code await_resume reports).
struct await_base {
  std::coroutine_handle<> h;
  int rc = 0;
  ws_token_t *token = nullptr; // the coroutine's (token_of)
  // Takes c and its token; false, with rc its code, when the token is
  // cancelled already: a wait begun after the cancel does not wait.
  template <class P> bool enter(std::coroutine_handle<P> c) noexcept
  {
    h = c;
    token = token_of(c);
    rc = token != nullptr ? ws_token_status(token) : 0;
    return rc == 0;
  }
  // ws_then_fn: the awaited native future is final; status and result say
  // how (CANCELLED: result is why).
  static int on_final(void *arg, int status, int result) noexcept
  {
    auto *a = static_cast<await_base *>(arg);
    a->rc = status == WS_FUTURE_CANCELLED ? result : 0;
    a->h.resume(); // a continuation task of the pool: resumes here
    return 0;
  }
  // Resumes the coroutine (enter()ed) once f is final
  // (ws_future_then_result); false when that cannot be arranged (rc says
  // why): the coroutine goes on now.
  bool resume_when_final(ws_future_t *f) noexcept
  {
    int r = ws_future_then_result(f, &on_final, this, nullptr);
    if (r == 0)
      return true; // *this may be gone already: the coroutine may run on
    rc = r;
    return false;
  }
};

// An awaiter that runs op() -- a call that may park -- in a task of the
// pool of its own, then resumes the coroutine in another: for the waits
// the C API has only as blocking calls (channels, ws_io_wait). The helper
// task parks in op() (a parked stack while it waits); the coroutine holds
// nothing. op() returns an int that await_resume interprets.
template <class Op> struct parked_op : await_base {
  Op op;
  explicit parked_op(Op o) : op(std::move(o))
  {
  }
  static int helper(void *arg) noexcept
  {
    auto *a = static_cast<parked_op *>(arg);
    a->rc = a->op();
    // A fresh task (the coroutine does not run on a parked stack), or this
    // one when none can be had. The awaiter lives in the coroutine's frame:
    // nothing of it is read once the coroutine may run.
    std::coroutine_handle<> h = a->h;
    if (submit_step(a->token, &resume_task, h.address(), &resume_ended) != 0)
      h.resume();
    return 0;
  }
  // on_end of the helper's resume task: its token kept it from starting.
  static int resume_ended(void *arg, int status, int) noexcept
  {
    if (status == WS_FUTURE_CANCELLED)
      std::coroutine_handle<>::from_address(arg).resume();
    return 0;
  }
  // on_end of the helper: its token kept it from starting; the wait
  // ends with the token's code.
  static int helper_ended(void *arg, int status, int result) noexcept
  {
    if (status == WS_FUTURE_CANCELLED) {
      auto *a = static_cast<parked_op *>(arg);
      a->rc = result;
      a->h.resume();
    }
    return 0;
  }
  template <class P> bool start(std::coroutine_handle<P> c) noexcept
  {
    if (!enter(c))
      return false; // cancelled: await_resume reports rc
    int rc2 = submit_step(token, &helper, this, &helper_ended);
    if (rc2 != 0) {
      rc = rc2;
      return false; // go on now; await_resume reports rc
    }
    return true;
  }
};
} // namespace detail

namespace detail
{
// The awaiters below are named classes, not local ones: their await_suspend
// is a template, to reach the awaiting coroutine's promise (token_of).
template <class T> struct future_awaiter : await_base {
  future<T> f;
  bool await_ready()
  {
    return f.ready();
  }
  template <class P> bool await_suspend(std::coroutine_handle<P> c) noexcept
  {
    return enter(c) && resume_when_final(f.native());
  }
  T await_resume()
  {
    // The token's code; WS_ENOMEM, WS_ESHUTDOWN: the continuation was refused.
    check(rc);
    return f.get();
  }
};
} // namespace detail

// co_await on a future inside a task<T>: resumes once the future is final
// (a continuation task of the future's pool) and gives get()'s value, or
// rethrows. Consumes the future.
template <class T> auto operator co_await(future<T> &&f)
{
  return detail::future_awaiter<T>{{}, std::move(f)};
}
template <class T> auto operator co_await(future<T> &f)
{
  return operator co_await(std::move(f));
}

namespace detail
{
struct delay_awaiter : await_base {
  int64_t ns;
  bool await_ready() noexcept
  {
    return false;
  }
  template <class P> bool await_suspend(std::coroutine_handle<P> c) noexcept
  {
    if (!enter(c))
      return false;
    // Under the coroutine's token (nullptr: the caller's): its cancel
    // takes the timer out at once, and the wait ends with its code.
    ws_future_t *f = nullptr;
    rc = ws_after_token(
        ws_current_pool(), ns, [](void *) noexcept { return 0; }, nullptr, token, &f);
    if (rc != 0)
      return false;
    bool later = resume_when_final(f);
    ws_future_release(f); // the continuation holds it
    return later;
  }
  void await_resume()
  {
    check(rc);
  }
};
} // namespace detail

// co_await ws::delay(d) inside a task<T>: resumes no earlier than d from
// now (a timer of the calling worker's pool under the coroutine's token,
// ws_after_token; no task waits). ws::error(WS_ESHUTDOWN) when the pool's
// shutdown cancelled the timer or refused it, the token's code when it was
// cancelled; WS_EINVAL outside every pool.
template <class Rep, class Period> auto delay(const std::chrono::duration<Rep, Period> &d)
{
  return detail::delay_awaiter{{}, detail::to_ns(d)};
}

namespace detail
{
struct io_op {
  int fd;
  unsigned events;
  int operator()() noexcept
  {
    return ws_io_wait(fd, events, WS_FOREVER);
  }
};
struct io_awaiter : parked_op<io_op> {
  using parked_op<io_op>::parked_op;
  bool await_ready() noexcept
  {
    return false;
  }
  template <class P> bool await_suspend(std::coroutine_handle<P> c) noexcept
  {
    return this->start(c);
  }
  unsigned await_resume()
  {
    check(this->rc);
    return static_cast<unsigned>(this->rc);
  }
};
} // namespace detail

// co_await ws::io_ready(fd, events) inside a task<T>: resumes once fd is
// ready for events (WS_IO_READ and/or WS_IO_WRITE) and gives the events
// ready, as ws::io_wait (whose errors it throws): a helper task waits in
// ws_io_wait for it (see detail::parked_op).
inline detail::io_awaiter io_ready(int fd, unsigned events)
{
  return detail::io_awaiter(detail::io_op{fd, events});
}

namespace detail
{
// co_await ws::send and ws::recv: one try without waiting (no suspension
// when it need not wait), else a helper task waits in the blocking call
// (parked_op). v: the value sent, or the one received.
template <class T, bool Send> struct chan_op {
  ws_chan_t *c;
  T v;
  int try_once() noexcept
  {
    return Send ? ws_chan_try_send(c, std::addressof(v)) : ws_chan_try_recv(c, std::addressof(v));
  }
  int operator()() noexcept
  {
    return Send ? ws_chan_send(c, std::addressof(v)) : ws_chan_recv(c, std::addressof(v));
  }
};
template <class T, bool Send> struct chan_awaiter : parked_op<chan_op<T, Send>> {
  using parked_op<chan_op<T, Send>>::parked_op;
  bool await_ready() noexcept
  {
    this->rc = this->op.try_once();
    return this->rc != WS_EAGAIN;
  }
  template <class P> bool await_suspend(std::coroutine_handle<P> c) noexcept
  {
    return this->start(c);
  }
  // send: true, or false when closed; recv: the value, or nullopt when
  // closed and drained; other codes are thrown.
  auto await_resume()
  {
    bool closed = this->rc == WS_ECLOSED;
    if (!closed)
      check(this->rc);
    if constexpr (Send)
      return !closed;
    else
      return closed ? std::nullopt : std::optional<T>(this->op.v);
  }
};
} // namespace detail

// co_await ws::send(ch, v) inside a task<T>: sends v, resuming once it
// went: true, or false when the channel is closed (as channel::send, whose
// errors it throws). Without a wait (room, or a receiver) it does not
// suspend; else a helper task waits in the send.
template <class T> detail::chan_awaiter<T, true> send(channel<T> &ch, T v)
{
  return detail::chan_awaiter<T, true>(detail::chan_op<T, true>{ch.native(), v});
}

// co_await ws::recv(ch) inside a task<T>: a value, or nullopt once the
// channel is closed and drained (as channel::recv, whose errors it
// throws). Without a wait it does not suspend; else a helper task waits in
// the receive.
template <class T> detail::chan_awaiter<T, false> recv(channel<T> &ch)
{
  return detail::chan_awaiter<T, false>(detail::chan_op<T, false>{ch.native(), T{}});
}
#endif // WS_HPP_COROUTINES

// Not wrapped, each for a reason:
//   ws_set_allocator, ws_mem_alloc, ws_mem_free: the C allocator is
//     process-wide; call them directly (this header's states use operator new).
//   ws_options_init_sized: pool's constructor calls ws_options_init for you.
//   ws_future_release, ws_io_release, ws_token_release, ws_chan_destroy,
//     ws_pool_destroy, ws_group_init, ws_group_spawn, ws_group_label: the
//     RAII classes above call them.
//   ws_parallel_sort: ws::parallel_sort sorts through comp (see there).
//   ws_strerror: ws::error's what() and ws::category().message().
//   ws_jf1_spawn, ws_jf1_sync, ws_jf1_count: the inline ws_join's ABI, not API.
//   ws_task_hold, ws_task_release: ws::spawn holds its task so for the
//     coroutine; a C++ task's result is what its callable returns, which a
//     held task's release could not give.

} // namespace ws

#undef WS__TRY
#undef WS__CATCH_ALL
#endif // C++17
#endif // WSCHED_HPP
