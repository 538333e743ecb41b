#pragma once
// Rate limiters decide how long a key waits before it is retried by a WorkQueue
// (WorkQueue::AddRateLimited). They follow client-go's workqueue rate limiters:
//
//   ItemExponentialFailureRateLimiter  per-key exponential backoff (base * 2^failures, capped)
//   BucketRateLimiter                  one token bucket shared by all keys (overall qps/burst)
//   MaxOfRateLimiter                   the longest delay of several limiters
//
// DefaultControllerRateLimiter() combines the first two the way client-go's
// DefaultTypedControllerRateLimiter does (5ms..1000s backoff, 10 qps with a burst of 100).
//
// Thread-safety: every RateLimiter here is safe for concurrent use.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/client/rate_limiter.h"
#include "common/util/clock.h"

namespace basalt::ctrlkit {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;

  // Records one more retry of `key` and returns how long it should wait before being
  // processed again.
  virtual Clock::Duration When(const std::string& key) = 0;
  // Stops tracking `key` (it was processed successfully): its backoff starts over.
  virtual void Forget(const std::string& key) = 0;
  // How many times `key` has been retried since it was last forgotten.
  virtual int NumRequeues(const std::string& key) = 0;
};

// Per-key exponential backoff: the n-th When() for a key (n counted from 0 since the last
// Forget) returns base * 2^n, never more than `max_delay`.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  static constexpr Clock::Duration kDefaultBaseDelay = std::chrono::milliseconds(5);
  static constexpr Clock::Duration kDefaultMaxDelay = std::chrono::seconds(1000);

  ItemExponentialFailureRateLimiter(Clock::Duration base_delay = kDefaultBaseDelay,
                                    Clock::Duration max_delay = kDefaultMaxDelay);

  Clock::Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) override;

 private:
  const Clock::Duration base_delay_;
  const Clock::Duration max_delay_;
  std::mutex mu_;
  std::unordered_map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
};

// A token bucket shared by all keys: `burst` tokens, refilled at `qps` per second of the
// injected clock. Each When() takes a token; when none is left it reserves a future one and
// returns the wait until then, so retries of many keys are spread out at `qps`. Keys are
// not tracked (Forget is a no-op, NumRequeues is 0). The bucket is the API client's
// (client::TokenBucketRateLimiter::Reserve), so `qps` <= 0 means no overall limit.
class BucketRateLimiter final : public RateLimiter {
 public:
  static constexpr double kDefaultQps = 10;
  static constexpr int kDefaultBurst = 100;

  // `clock` must outlive the limiter.
  BucketRateLimiter(Clock* clock, double qps = kDefaultQps, int burst = kDefaultBurst);

  Clock::Duration When(const std::string&) override { return bucket_.Reserve(); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  client::TokenBucketRateLimiter bucket_;
};

// Returns the longest delay of its limiters; Forget forwards to all, NumRequeues is the
// maximum.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);

  Clock::Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) override;

 private:
  const std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// Max of ItemExponentialFailureRateLimiter(5ms, 1000s) and BucketRateLimiter(10 qps, 100).
// `clock` must outlive the limiter.
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock* clock);

}  // namespace basalt::ctrlkit
