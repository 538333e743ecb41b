// Makes absl::Mutex and absl::CondVar visible to ThreadSanitizer in Basalt's TSan build.
//
// Debian's Abseil is a shared library built without TSan, so its Mutex neither is instrumented
// nor calls TSan's mutex annotations: to TSan, everything guarded by an absl::Mutex (the work
// queue, the informer store, the reflector...) looks unsynchronized, and every test that
// touches it from two threads would report a race. This file, linked into every executable of
// the TSan build only (cmake/Sanitizers.cmake), defines the out-of-line entry points of Mutex
// and CondVar itself: the executable's definitions take precedence over the shared library's,
// each forwards to the library's own function (found with dlsym(RTLD_NEXT)) and tells TSan
// about the acquire or release with the __tsan_mutex_* annotations, as Abseil does when built
// with TSan.
//
// The annotations are placed so that TSan considers the mutex free while the real function
// runs: an acquisition is announced after the real lock returns, a release before the real
// unlock starts. Abseil evaluates Conditions inside those functions, possibly in another thread
// (an Unlock evaluates the waiters' conditions), so every Condition is wrapped to announce a
// hold of the mutex around its evaluation. Not thread-safety relevant beyond that: stateless.

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace {

#define BASALT_STR2(x) #x
#define BASALT_STR(x) BASALT_STR2(x)

// The library's definition of "absl::<inline namespace>::<suffix>" (Itanium mangling).
void* Real(const char* suffix) {
  const char* ns = BASALT_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  std::string name = "_ZN4absl" + std::to_string(std::strlen(ns)) + ns + suffix;
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: %s not found in Abseil: %s\n", name.c_str(), dlerror());
    std::abort();
  }
  return fn;
}

template <typename Fn>
Fn RealFn(const char* suffix) {
  return reinterpret_cast<Fn>(Real(suffix));
}

void Acquired(void* mu, unsigned flags) {
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
}
void Releasing(void* mu, unsigned flags) {
  __tsan_mutex_pre_unlock(mu, flags);
  __tsan_mutex_post_unlock(mu, flags);
}

// A Condition evaluated by Abseil while it holds `mu` for real (in this thread or another).
struct AnnotatedCondition {
  const absl::Condition* inner;
  void* mu;
  unsigned flags;

  static bool Eval(AnnotatedCondition* c) {
    Acquired(c->mu, c->flags);
    bool result = c->inner->Eval();
    Releasing(c->mu, c->flags);
    return result;
  }
};

constexpr unsigned kRead = __tsan_mutex_read_lock;

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

// Member functions take `this` as the first argument in the Itanium C++ ABI.
using MuFn = void (*)(Mutex*);
using MuBoolFn = bool (*)(Mutex*);
using MuCondFn = void (*)(Mutex*, const Condition&);
using MuCondDurFn = bool (*)(Mutex*, const Condition&, Duration);
using MuCondTimeFn = bool (*)(Mutex*, const Condition&, Time);

void Mutex::Lock() {
  static const auto real = RealFn<MuFn>("5Mutex4LockEv");
  real(this);
  Acquired(this, 0);
}
void Mutex::ReaderLock() {
  static const auto real = RealFn<MuFn>("5Mutex10ReaderLockEv");
  real(this);
  Acquired(this, kRead);
}
void Mutex::Unlock() {
  static const auto real = RealFn<MuFn>("5Mutex6UnlockEv");
  Releasing(this, 0);
  real(this);
}
void Mutex::ReaderUnlock() {
  static const auto real = RealFn<MuFn>("5Mutex12ReaderUnlockEv");
  Releasing(this, kRead);
  real(this);
}
bool Mutex::TryLock() {
  static const auto real = RealFn<MuBoolFn>("5Mutex7TryLockEv");
  bool ok = real(this);
  if (ok) {
    __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
    __tsan_mutex_post_lock(this, __tsan_mutex_try_lock, 0);
  }
  return ok;
}
bool Mutex::ReaderTryLock() {
  static const auto real = RealFn<MuBoolFn>("5Mutex13ReaderTryLockEv");
  bool ok = real(this);
  if (ok) {
    __tsan_mutex_pre_lock(this, kRead | __tsan_mutex_try_lock);
    __tsan_mutex_post_lock(this, kRead | __tsan_mutex_try_lock, 0);
  }
  return ok;
}

#define BASALT_WRAP(cond, flags)                        \
  AnnotatedCondition annotated{&(cond), this, (flags)}; \
  Condition wrapped(&AnnotatedCondition::Eval, &annotated)

void Mutex::LockWhen(const Condition& cond) {
  static const auto real = RealFn<MuCondFn>("5Mutex8LockWhenERKNS0_9ConditionE");
  BASALT_WRAP(cond, 0);
  real(this, wrapped);
  Acquired(this, 0);
}
void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real = RealFn<MuCondFn>("5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  BASALT_WRAP(cond, kRead);
  real(this, wrapped);
  Acquired(this, kRead);
}
bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static const auto real =
      RealFn<MuCondDurFn>("5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  BASALT_WRAP(cond, 0);
  bool r = real(this, wrapped, timeout);
  Acquired(this, 0);
  return r;
}
bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, Duration timeout) {
  static const auto real =
      RealFn<MuCondDurFn>("5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  BASALT_WRAP(cond, kRead);
  bool r = real(this, wrapped, timeout);
  Acquired(this, kRead);
  return r;
}
bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const auto real =
      RealFn<MuCondTimeFn>("5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  BASALT_WRAP(cond, 0);
  bool r = real(this, wrapped, deadline);
  Acquired(this, 0);
  return r;
}
bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, Time deadline) {
  static const auto real =
      RealFn<MuCondTimeFn>("5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  BASALT_WRAP(cond, kRead);
  bool r = real(this, wrapped, deadline);
  Acquired(this, kRead);
  return r;
}

// Await releases the mutex while it waits and reacquires it before returning. Abseil allows
// Await under a reader lock too; announcing a write hold is then stricter, never looser.
void Mutex::Await(const Condition& cond) {
  static const auto real = RealFn<MuCondFn>("5Mutex5AwaitERKNS0_9ConditionE");
  BASALT_WRAP(cond, 0);
  Releasing(this, 0);
  real(this, wrapped);
  Acquired(this, 0);
}
bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  static const auto real =
      RealFn<MuCondDurFn>("5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  BASALT_WRAP(cond, 0);
  Releasing(this, 0);
  bool r = real(this, wrapped, timeout);
  Acquired(this, 0);
  return r;
}
bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  static const auto real =
      RealFn<MuCondTimeFn>("5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  BASALT_WRAP(cond, 0);
  Releasing(this, 0);
  bool r = real(this, wrapped, deadline);
  Acquired(this, 0);
  return r;
}
#undef BASALT_WRAP

using CvFn = void (*)(CondVar*, Mutex*);
using CvDurFn = bool (*)(CondVar*, Mutex*, Duration);
using CvTimeFn = bool (*)(CondVar*, Mutex*, Time);

void CondVar::Wait(Mutex* mu) {
  static const auto real = RealFn<CvFn>("7CondVar4WaitEPNS0_5MutexE");
  Releasing(mu, 0);
  real(this, mu);
  Acquired(mu, 0);
}
bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  static const auto real = RealFn<CvDurFn>("7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  Releasing(mu, 0);
  bool r = real(this, mu, timeout);
  Acquired(mu, 0);
  return r;
}
bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  static const auto real = RealFn<CvTimeFn>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  Releasing(mu, 0);
  bool r = real(this, mu, deadline);
  Acquired(mu, 0);
  return r;
}

ABSL_NAMESPACE_END
}  // namespace absl
