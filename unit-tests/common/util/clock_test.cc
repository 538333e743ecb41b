#include "common/util/clock.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

TEST_CASE("FakeClock: time moves only on Advance", "[clock]") {
  basalt::FakeClock clock;
  auto t0 = clock.Now();
  auto w0 = clock.WallNow();
  REQUIRE(clock.Now() == t0);
  clock.Advance(5s);
  REQUIRE(clock.Now() - t0 == std::chrono::steady_clock::duration(5s));
  REQUIRE(clock.WallNow() - w0 == std::chrono::system_clock::duration(5s));
}

TEST_CASE("FakeClock: a sleeper wakes when fake time reaches its deadline", "[clock]") {
  basalt::FakeClock clock;
  std::atomic<bool> woke{false};
  std::thread t([&] {
    clock.SleepFor(10s);
    woke = true;
  });
  clock.WaitForSleepers(1);
  clock.Advance(9s);
  REQUIRE(clock.Sleepers() == 1);  // still asleep: 1s left
  REQUIRE_FALSE(woke.load());
  clock.Advance(1s);
  t.join();
  REQUIRE(woke.load());
  REQUIRE(clock.Sleepers() == 0);
}

TEST_CASE("FakeClock: WaitForSleeps counts every SleepUntil, also one right after a wake-up",
          "[clock]") {
  basalt::FakeClock clock;
  std::atomic<int> rounds{0};
  std::thread t([&] {
    for (int i = 0; i < 3; ++i) {
      clock.SleepFor(1s);
      ++rounds;
    }
  });
  for (int i = 1; i <= 3; ++i) {
    clock.WaitForSleeps(i);  // sleep i has begun, so round i - 1 has finished
    REQUIRE(rounds.load() == i - 1);
    clock.Advance(1s);
  }
  t.join();
  REQUIRE(rounds.load() == 3);
}

TEST_CASE("FakeClock: WaitUntil wakes on Advance to the deadline, not before", "[clock]") {
  basalt::FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  const auto deadline = clock.Now() + 10s;
  std::atomic<int> wakes{0};
  std::thread t([&] {
    std::unique_lock<std::mutex> l(mu);
    while (clock.Now() < deadline) {
      clock.WaitUntil(l, cv, deadline);
      ++wakes;
    }
  });
  REQUIRE(clock.WaitForTimers(1));
  clock.Advance(9s);
  CHECK(clock.Timers() == 1);  // 1s left: still armed, not woken
  CHECK(wakes == 0);
  clock.Advance(1s);  // returns after waking the waiter
  t.join();
  CHECK(wakes == 1);
  CHECK(clock.Timers() == 0);
}

TEST_CASE("FakeClock: WaitUntil also returns on the caller's notify, and at once when due",
          "[clock]") {
  basalt::FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread t([&] {
    std::unique_lock<std::mutex> l(mu);
    while (!stop) clock.WaitUntil(l, cv, clock.Now() + 1h);
  });
  REQUIRE(clock.WaitForTimers(1));
  {
    std::lock_guard<std::mutex> l(mu);
    stop = true;
  }
  cv.notify_all();
  t.join();
  CHECK(clock.Timers() == 0);

  std::unique_lock<std::mutex> l(mu);
  clock.WaitUntil(l, cv, clock.Now());  // already due: does not block
  CHECK(l.owns_lock());
}

TEST_CASE("FakeClock: one Advance wakes every due waiter", "[clock]") {
  basalt::FakeClock clock;
  std::mutex mu;
  std::condition_variable cv_a;
  std::condition_variable cv_b;
  std::vector<std::string> order;
  std::mutex order_mu;
  auto waiter = [&](std::condition_variable& cv, basalt::Clock::Duration d, std::string name) {
    const auto deadline = clock.Now() + d;
    std::unique_lock<std::mutex> l(mu);
    while (clock.Now() < deadline) clock.WaitUntil(l, cv, deadline);
    std::lock_guard<std::mutex> o(order_mu);
    order.push_back(std::move(name));
  };
  std::thread a(waiter, std::ref(cv_a), 5s, "a");
  std::thread b(waiter, std::ref(cv_b), 3s, "b");
  REQUIRE(clock.WaitForTimers(2));
  clock.Advance(1h);
  a.join();
  b.join();
  CHECK(order.size() == 2);
  CHECK(clock.Timers() == 0);
}

TEST_CASE("RealClock: WaitUntil returns at the deadline", "[clock]") {
  basalt::Clock* clock = basalt::Clock::Real();
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> l(mu);
  const auto deadline = clock->Now() + 2ms;
  while (clock->Now() < deadline) clock->WaitUntil(l, cv, deadline);
  CHECK(clock->Now() >= deadline);
}

TEST_CASE("SleepUntil with a stop token: the deadline passes on the clock, a stop wakes it",
          "[clock]") {
  basalt::FakeClock clock;
  std::stop_source stop;
  bool reached = false;
  std::thread sleeper(
      [&] { reached = basalt::SleepUntil(clock, stop.get_token(), clock.Now() + 5s); });
  REQUIRE(clock.WaitForTimers(1));
  clock.Advance(5s);
  sleeper.join();
  CHECK(reached);

  bool reached2 = true;
  std::thread stopped(
      [&] { reached2 = basalt::SleepUntil(clock, stop.get_token(), clock.Now() + 1h); });
  REQUIRE(clock.WaitForTimers(1));
  stop.request_stop();  // no Advance
  stopped.join();
  CHECK_FALSE(reached2);
  // Already stopped: returns at once.
  CHECK_FALSE(basalt::SleepUntil(clock, stop.get_token(), clock.Now() + 1h));
}
