#include "common/util/clock.h"

#include <thread>

namespace basalt {

Clock* Clock::Real() {
  static RealClock* clock = new RealClock();
  return clock;
}

bool RealClock::SleepUntil(TimePoint deadline) {
  std::this_thread::sleep_until(deadline);
  return true;
}

FakeClock::FakeClock()
    : now_(TimePoint{} + std::chrono::hours(1000)),
      wall_now_(SystemTimePoint{} + std::chrono::seconds(1767225600)) {}  // 2026-01-01T00:00:00Z

Clock::TimePoint FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

Clock::SystemTimePoint FakeClock::WallNow() const {
  std::lock_guard<std::mutex> l(mu_);
  return wall_now_;
}

bool FakeClock::SleepUntil(TimePoint deadline) {
  std::unique_lock<std::mutex> l(mu_);
  ++sleepers_;
  cv_.notify_all();
  cv_.wait(l, [&] { return now_ >= deadline; });
  --sleepers_;
  return true;
}

void FakeClock::Advance(Duration d) {
  std::lock_guard<std::mutex> l(mu_);
  now_ += d;
  wall_now_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  cv_.notify_all();
}

int FakeClock::Sleepers() const {
  std::lock_guard<std::mutex> l(mu_);
  return sleepers_;
}

void FakeClock::WaitForSleepers(int n) const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return sleepers_ >= n; });
}

}  // namespace basalt
