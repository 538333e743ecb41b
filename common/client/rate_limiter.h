#pragma once
// TokenBucketRateLimiter: client-side throttling of API requests, like client-go's
// flowcontrol.NewTokenBucketRateLimiter. The bucket holds up to `burst` tokens and refills at
// `qps` tokens per second; every request takes one token, waiting when none is left.
// Basalt's one token bucket: the work queues' overall retry limit
// (ctrlkit::BucketRateLimiter) is this bucket's Reserve().
//
// Thread-safe. The Clock is not owned and must outlive the limiter.

#include <mutex>

#include "common/util/clock.h"

namespace basalt::client {

class TokenBucketRateLimiter {
 public:
  // `qps` <= 0 disables limiting. `burst` < 1 is treated as 1.
  TokenBucketRateLimiter(double qps, int burst, Clock* clock);
  TokenBucketRateLimiter(const TokenBucketRateLimiter&) = delete;
  TokenBucketRateLimiter& operator=(const TokenBucketRateLimiter&) = delete;

  // Takes a token, blocking (on the Clock) until one is available.
  void Accept();
  // Takes a token if one is available now.
  bool TryAccept();
  // Takes a token (possibly borrowing from the future) and returns how long the caller must
  // wait before using it; zero when a token was available.
  Clock::Duration Reserve();

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void RefillLocked(Clock::TimePoint now);

  const double qps_;
  const int burst_;
  Clock* const clock_;
  std::mutex mu_;
  double tokens_;  // may go negative: reserved future tokens
  Clock::TimePoint last_;
};

}  // namespace basalt::client
