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
  ++sleeps_;
  cv_.notify_all();
  cv_.wait(l, [&] { return now_ >= deadline; });
  --sleepers_;
  return true;
}

void FakeClock::WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          TimePoint deadline) {
  std::list<Timer>::iterator timer;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (now_ >= deadline) return;
    timer = timers_.insert(timers_.end(), Timer{deadline, lock.mutex(), &cv});
    cv_.notify_all();  // for WaitForTimers
  }
  // Advance() takes `lock`'s mutex before it notifies, so it cannot wake us between the
  // registration above and this wait (we hold the mutex until the wait releases it).
  cv.wait(lock);
  std::unique_lock<std::mutex> l(mu_);
  if (timer->firing) {
    // Advance() is about to take `lock`'s mutex or to notify `cv`: let it finish first.
    lock.unlock();
    cv_.wait(l, [&] { return !timer->firing; });
    timers_.erase(timer);
    l.unlock();
    lock.lock();
    return;
  }
  timers_.erase(timer);
}

void FakeClock::Advance(Duration d) {
  std::unique_lock<std::mutex> l(mu_);
  now_ += d;
  wall_now_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
  cv_.notify_all();
  // Wake the due WaitUntil callers, earliest first, each with the clock's mutex released
  // (the waiter's mutex may be held by a thread that calls Now()).
  while (true) {
    Timer* due = nullptr;
    for (Timer& t : timers_) {
      if (!t.firing && t.deadline <= now_ && (due == nullptr || t.deadline < due->deadline)) {
        due = &t;
      }
    }
    if (due == nullptr) break;
    due->firing = true;
    std::mutex* mu = due->mu;
    std::condition_variable* cv = due->cv;
    l.unlock();
    { std::lock_guard<std::mutex> waiter(*mu); }
    cv->notify_all();
    l.lock();
    due->firing = false;
    due->deadline = TimePoint::max();  // woken once; it erases itself
    cv_.notify_all();
  }
}

int FakeClock::Timers() const {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (const Timer& t : timers_) n += t.deadline != TimePoint::max();
  return n;
}

bool FakeClock::WaitForTimers(int n, std::chrono::seconds timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, timeout, [&] {
    int armed = 0;
    for (const Timer& t : timers_) armed += t.deadline != TimePoint::max();
    return armed >= n;
  });
}

bool FakeClock::WaitForTimerBy(TimePoint by, std::chrono::seconds timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, timeout, [&] {
    for (const Timer& t : timers_) {
      if (t.deadline <= by) return true;
    }
    return false;
  });
}

FakeClock::TimePoint FakeClock::NextDeadline() const {
  std::lock_guard<std::mutex> l(mu_);
  TimePoint next = TimePoint::max();
  for (const Timer& t : timers_) next = std::min(next, t.deadline);
  return next;
}

int FakeClock::Sleepers() const {
  std::lock_guard<std::mutex> l(mu_);
  return sleepers_;
}

void FakeClock::WaitForSleepers(int n) const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return sleepers_ >= n; });
}

void FakeClock::WaitForSleeps(int64_t n) const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return sleeps_ >= n; });
}

bool SleepUntil(Clock& clock, const std::stop_token& stop, Clock::TimePoint deadline) {
  std::mutex mu;
  std::condition_variable cv;
  // Declared before the lock: destroyed after it, so a callback running concurrently (it takes
  // `mu`) can finish.
  std::stop_callback wake(stop, [&] {
    std::lock_guard<std::mutex> l(mu);
    cv.notify_all();
  });
  std::unique_lock<std::mutex> l(mu);
  while (!stop.stop_requested()) {
    if (clock.Now() >= deadline) return true;
    clock.WaitUntil(l, cv, deadline);
  }
  return false;
}

}  // namespace basalt
