#include "common/util/clock.h"

#include <catch2/catch.hpp>
#include <thread>

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
