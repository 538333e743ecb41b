#include "common/ctrlkit/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace basalt::ctrlkit {

ItemExponentialFailureRateLimiter::ItemExponentialFailureRateLimiter(Clock::Duration base_delay,
                                                                     Clock::Duration max_delay)
    : base_delay_(base_delay), max_delay_(max_delay) {}

Clock::Duration ItemExponentialFailureRateLimiter::When(const std::string& key) {
  int exponent;
  {
    std::lock_guard<std::mutex> l(mu_);
    exponent = failures_[key]++;
  }
  // Computed in floating point so large exponents saturate at max_delay_ instead of
  // overflowing the integer tick count.
  const double delay = static_cast<double>(base_delay_.count()) * std::pow(2.0, exponent);
  if (delay >= static_cast<double>(max_delay_.count())) return max_delay_;
  return Clock::Duration(static_cast<Clock::Duration::rep>(delay));
}

void ItemExponentialFailureRateLimiter::Forget(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  failures_.erase(key);
}

int ItemExponentialFailureRateLimiter::NumRequeues(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(Clock* clock, double qps, int burst)
    : bucket_(qps, burst, clock) {}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

Clock::Duration MaxOfRateLimiter::When(const std::string& key) {
  Clock::Duration longest = Clock::Duration::zero();
  // Every limiter must see the retry (each keeps its own count), so no short-circuit.
  for (const auto& limiter : limiters_) longest = std::max(longest, limiter->When(key));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (const auto& limiter : limiters_) limiter->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock* clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>());
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace basalt::ctrlkit
