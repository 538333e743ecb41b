#include "common/client/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace basalt::client {

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, Clock* clock)
    : qps_(qps), burst_(std::max(burst, 1)), clock_(clock), tokens_(burst_), last_(clock->Now()) {}

void TokenBucketRateLimiter::RefillLocked(Clock::TimePoint now) {
  if (now <= last_) return;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool TokenBucketRateLimiter::TryAccept() {
  if (qps_ <= 0) return true;
  std::lock_guard<std::mutex> l(mu_);
  RefillLocked(clock_->Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

Clock::Duration TokenBucketRateLimiter::Reserve() {
  if (qps_ <= 0) return Clock::Duration::zero();
  std::lock_guard<std::mutex> l(mu_);
  RefillLocked(clock_->Now());
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucketRateLimiter::Accept() {
  Clock::Duration wait = Reserve();
  if (wait > Clock::Duration::zero()) clock_->SleepFor(wait);
}

}  // namespace basalt::client
