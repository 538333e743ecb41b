#pragma once
// Clock is the injectable source of time for every Basalt component. Production code
// uses RealClock; unit tests use FakeClock, whose timers fire only on Advance(), so no
// test ever sleeps or polls. The timers are the two ways to wait for a time: SleepUntil
// (block the thread) and WaitUntil (a timed wait on the caller's condition variable, woken
// early by its notify).
//
// Thread-safety: all Clock implementations are safe for concurrent use.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>

namespace basalt {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;
  using SystemTimePoint = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;

  // Monotonic time, for timeouts and rate limits.
  virtual TimePoint Now() const = 0;
  // Wall-clock time, for timestamps written to the API (lease renewTime, event times).
  virtual SystemTimePoint WallNow() const = 0;

  // Blocks the caller until `deadline` (monotonic) or until `wake` returns true when
  // notified through the condition variable. With FakeClock, waiting returns once the
  // fake time passes the deadline via Advance(). Returns true if the deadline passed.
  virtual bool SleepUntil(TimePoint deadline) = 0;
  bool SleepFor(Duration d) { return SleepUntil(Now() + d); }

  // cv.wait_until on this clock: with `lock` (of the mutex guarding the caller's state) held,
  // waits until `cv` is notified, the clock reaches `deadline`, or spuriously; returns with
  // `lock` held. Callers re-check their predicate and Now() in a loop, as with any condition
  // variable. FakeClock wakes the waiter when Advance() reaches the deadline (taking the
  // mutex first, so the wake is not lost); it may release and re-take `lock` on the way out.
  virtual void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         TimePoint deadline) = 0;

  // The process-wide real clock.
  static Clock* Real();
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  SystemTimePoint WallNow() const override { return std::chrono::system_clock::now(); }
  bool SleepUntil(TimePoint deadline) override;
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline) override {
    cv.wait_until(lock, deadline);
  }
};

// Waits on `clock` until `deadline` or until `stop` is requested, whichever comes first. A stop
// request wakes the waiter at once (a stop_callback, no polling); with FakeClock the deadline
// passes on Advance(). Returns true if the deadline passed, false if stopped.
bool SleepUntil(Clock& clock, const std::stop_token& stop, Clock::TimePoint deadline);

// FakeClock starts at an arbitrary fixed point and moves only when Advance() is called.
// Threads blocked in SleepUntil() or WaitUntil() wake when the fake time reaches their
// deadline: Advance() returns after it has woken every waiter that became due.
class FakeClock final : public Clock {
 public:
  FakeClock();
  TimePoint Now() const override;
  SystemTimePoint WallNow() const override;
  bool SleepUntil(TimePoint deadline) override;
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline) override;

  void Advance(Duration d);
  // Number of threads currently blocked in SleepUntil (lets tests wait for a sleeper
  // before advancing without real sleeps).
  int Sleepers() const;
  // Blocks (really) until at least `n` threads sleep in SleepUntil.
  void WaitForSleepers(int n) const;
  // Blocks (really) until SleepUntil has been called `n` times in all since construction, for
  // code that sleeps again right after a wake-up (a count of current sleepers can still see
  // the one that Advance() has just woken).
  void WaitForSleeps(int64_t n) const;
  // Number of WaitUntil calls waiting for a deadline, and a (real) wait for at least `n`:
  // lets a test advance only once the code under test has armed its timer.
  // WaitForTimers gives up after `timeout` of real time and returns false (a test failure,
  // not a hang, when the code under test never waits again).
  int Timers() const;
  bool WaitForTimers(int n, std::chrono::seconds timeout = std::chrono::seconds(10)) const;
  // A (real) wait until some WaitUntil is armed with a deadline at or before `by`, for code
  // that re-arms its timer after a change (a count alone can see the old timer). The earliest
  // armed deadline, TimePoint::max() when none.
  bool WaitForTimerBy(TimePoint by, std::chrono::seconds timeout = std::chrono::seconds(10)) const;
  TimePoint NextDeadline() const;

 private:
  // One WaitUntil in progress. `firing` while Advance() wakes it: the waiter then waits
  // before it returns, so that Advance() never touches a mutex or condition variable whose
  // owner has gone.
  struct Timer {
    TimePoint deadline;
    std::mutex* mu;
    std::condition_variable* cv;
    bool firing = false;
  };

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  TimePoint now_;
  SystemTimePoint wall_now_;
  int sleepers_ = 0;
  int64_t sleeps_ = 0;       // SleepUntil calls begun
  std::list<Timer> timers_;  // guarded by mu_
};

}  // namespace basalt
