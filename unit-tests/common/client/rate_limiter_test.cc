#include "common/client/rate_limiter.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "common/util/clock.h"

using basalt::FakeClock;
using basalt::client::TokenBucketRateLimiter;
using std::chrono::milliseconds;

TEST_CASE("TokenBucketRateLimiter: a full bucket allows a burst, then qps per second",
          "[ratelimiter]") {
  FakeClock clock;
  TokenBucketRateLimiter limiter(10, 5, &clock);
  for (int i = 0; i < 5; ++i) REQUIRE(limiter.TryAccept());
  REQUIRE_FALSE(limiter.TryAccept());
  clock.Advance(milliseconds(99));
  REQUIRE_FALSE(limiter.TryAccept());
  clock.Advance(milliseconds(1));
  REQUIRE(limiter.TryAccept());
  REQUIRE_FALSE(limiter.TryAccept());
  // A long pause refills only up to the burst.
  clock.Advance(std::chrono::seconds(60));
  for (int i = 0; i < 5; ++i) REQUIRE(limiter.TryAccept());
  REQUIRE_FALSE(limiter.TryAccept());
}

TEST_CASE("TokenBucketRateLimiter: Reserve spaces requests 1/qps apart once the burst is used",
          "[ratelimiter]") {
  FakeClock clock;
  TokenBucketRateLimiter limiter(50, 2, &clock);
  REQUIRE(limiter.Reserve() == FakeClock::Duration::zero());
  REQUIRE(limiter.Reserve() == FakeClock::Duration::zero());
  REQUIRE(std::chrono::duration_cast<milliseconds>(limiter.Reserve()) == milliseconds(20));
  REQUIRE(std::chrono::duration_cast<milliseconds>(limiter.Reserve()) == milliseconds(40));
  clock.Advance(milliseconds(40));
  REQUIRE(std::chrono::duration_cast<milliseconds>(limiter.Reserve()) == milliseconds(20));
}

TEST_CASE("TokenBucketRateLimiter: Accept blocks until the fake clock advances", "[ratelimiter]") {
  FakeClock clock;
  TokenBucketRateLimiter limiter(1, 1, &clock);
  limiter.Accept();  // the burst token
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    limiter.Accept();
    done = true;
  });
  clock.WaitForSleepers(1);
  REQUIRE_FALSE(done);
  clock.Advance(std::chrono::seconds(1));
  waiter.join();
  REQUIRE(done);
}

TEST_CASE("TokenBucketRateLimiter: qps <= 0 never limits", "[ratelimiter]") {
  FakeClock clock;
  TokenBucketRateLimiter limiter(0, 1, &clock);
  for (int i = 0; i < 1000; ++i) REQUIRE(limiter.TryAccept());
}
