#pragma once
// Client-side resilience: which failed requests to retry and when (DecideRetry, pure and unit
// tested), and RetryingTransport, a Transport decorator that applies a token-bucket rate
// limiter to every attempt and retries by that policy.
//
// Policy: 429 is retried for every verb (the server did not act), honouring Retry-After;
// 500/502/503/504 and connection failures/timeouts only for idempotent verbs (GET, HEAD,
// OPTIONS, PUT, DELETE), or for any verb when the transport marked the failure as "request not
// sent" (MarkRequestNotSent: connection refused, or the write failed). POST and PATCH are never
// retried after a 5xx or a connection that broke once the request was out: the server may have
// applied them (a JSON patch "add" applied twice is not the same).

#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/client/rate_limiter.h"
#include "common/client/transport.h"
#include "common/util/clock.h"

namespace basalt::client {

struct RetryPolicy {
  int max_retries = 5;
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::seconds max_retry_after{30};  // a larger Retry-After is capped to this
  double jitter = 0.2;                       // backoff is stretched by up to this fraction
};

struct RetryDecision {
  bool retry = false;
  std::chrono::milliseconds delay{0};
  bool from_retry_after = false;  // delay came from the server's Retry-After header
};

bool IsIdempotentVerb(std::string_view verb);

// Marks a transport failure as one where the request provably never reached the server (the
// connection could not be made, or writing the request failed), so any verb may be retried.
// OK stays OK.
absl::Status MarkRequestNotSent(absl::Status status);
bool RequestNotSent(const absl::Status& status);

// Decides whether attempt number `attempt` (0 = the first try) of `request`, which ended with
// `result`, should be retried, and after what delay (before jitter).
RetryDecision DecideRetry(const RetryPolicy& policy, const Request& request, int attempt,
                          const absl::StatusOr<Response>& result);

// Rate limits and retries requests of an inner Transport. Thread-safe. Owns `inner`; the Clock
// is not owned.
class RetryingTransport : public Transport {
 public:
  RetryingTransport(std::unique_ptr<Transport> inner, RetryPolicy policy, double qps, int burst,
                    Clock* clock);

  absl::StatusOr<Response> Do(const Request& request) override;
  // Streams are rate limited but not retried: the caller (a reflector) relists or rewatches.
  absl::StatusOr<Response> Stream(const Request& request, const LineCallback& on_line,
                                  CancelToken* cancel) override;

  std::string CredentialsDescription() const override { return inner_->CredentialsDescription(); }

  Transport& inner() { return *inner_; }

 private:
  std::unique_ptr<Transport> inner_;
  const RetryPolicy policy_;
  TokenBucketRateLimiter limiter_;
  Clock* const clock_;
  std::mutex rng_mu_;
  std::minstd_rand rng_;
};

}  // namespace basalt::client
