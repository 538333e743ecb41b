#pragma once
// Clock is the injectable source of time for every Basalt component. Production code
// uses RealClock; unit tests use FakeClock, whose timers fire only on Advance(), so no
// test ever sleeps.
//
// Thread-safety: all Clock implementations are safe for concurrent use.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

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

  // The process-wide real clock.
  static Clock* Real();
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  SystemTimePoint WallNow() const override { return std::chrono::system_clock::now(); }
  bool SleepUntil(TimePoint deadline) override;
};

// FakeClock starts at an arbitrary fixed point and moves only when Advance() or Set() is
// called. Threads blocked in SleepUntil() wake when the fake time reaches their deadline.
class FakeClock final : public Clock {
 public:
  FakeClock();
  TimePoint Now() const override;
  SystemTimePoint WallNow() const override;
  bool SleepUntil(TimePoint deadline) override;

  void Advance(Duration d);
  // Number of threads currently blocked in SleepUntil (lets tests wait for a sleeper
  // before advancing without real sleeps).
  int Sleepers() const;
  // Blocks (really) until at least `n` threads sleep in SleepUntil.
  void WaitForSleepers(int n) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  TimePoint now_;
  SystemTimePoint wall_now_;
  int sleepers_ = 0;
};

}  // namespace basalt
