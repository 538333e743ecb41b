#include "common/client/retry.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "absl/strings/cord.h"
#include "common/util/log.h"
#include "common/util/status.h"

namespace basalt::client {
namespace {

std::chrono::milliseconds Backoff(const RetryPolicy& policy, int attempt) {
  std::chrono::milliseconds d = policy.initial_backoff;
  for (int i = 0; i < attempt && d < policy.max_backoff; ++i) d *= 2;
  return std::min(d, policy.max_backoff);
}

// Retry-After in seconds (the HTTP-date form is not used by the API server).
std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  int64_t seconds = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::seconds(seconds);
}

constexpr char kNotSentPayload[] = "basalt.io/client/request-not-sent";

}  // namespace

absl::Status MarkRequestNotSent(absl::Status status) {
  if (!status.ok()) status.SetPayload(kNotSentPayload, absl::Cord("true"));
  return status;
}

bool RequestNotSent(const absl::Status& status) {
  return status.GetPayload(kNotSentPayload).has_value();
}

bool IsIdempotentVerb(std::string_view verb) {
  return verb == "GET" || verb == "HEAD" || verb == "OPTIONS" || verb == "PUT" || verb == "DELETE";
}

RetryDecision DecideRetry(const RetryPolicy& policy, const Request& request, int attempt,
                          const absl::StatusOr<Response>& result) {
  RetryDecision no;
  int max_retries = request.max_retries >= 0 ? request.max_retries : policy.max_retries;
  if (attempt >= max_retries) return no;
  bool idempotent = IsIdempotentVerb(request.verb);
  if (!result.ok()) {
    absl::StatusCode code = result.status().code();
    bool transient =
        code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded;
    if (!transient || !(idempotent || RequestNotSent(result.status()))) return no;
    return {true, Backoff(policy, attempt), false};
  }
  int status = result->status_code;
  bool retryable =
      status == 429 ||
      (idempotent && (status == 500 || status == 502 || status == 503 || status == 504));
  if (!retryable) return no;
  if (auto after = ParseRetryAfter(result->Header("Retry-After")); after.has_value()) {
    return {true,
            std::chrono::duration_cast<std::chrono::milliseconds>(
                std::min<std::chrono::seconds>(*after, policy.max_retry_after)),
            true};
  }
  return {true, Backoff(policy, attempt), false};
}

RetryingTransport::RetryingTransport(std::unique_ptr<Transport> inner, RetryPolicy policy,
                                     double qps, int burst, Clock* clock)
    : inner_(std::move(inner)),
      policy_(policy),
      limiter_(qps, burst, clock),
      clock_(clock),
      rng_(std::random_device{}()) {}

absl::StatusOr<Response> RetryingTransport::Do(const Request& request) {
  for (int attempt = 0;; ++attempt) {
    limiter_.Accept();
    absl::StatusOr<Response> result = inner_->Do(request);
    RetryDecision decision = DecideRetry(policy_, request, attempt, result);
    if (!decision.retry) return result;
    std::chrono::milliseconds delay = decision.delay;
    if (!decision.from_retry_after && policy_.jitter > 0) {
      std::lock_guard<std::mutex> l(rng_mu_);
      std::uniform_real_distribution<double> u(0, policy_.jitter);
      delay += std::chrono::milliseconds(static_cast<int64_t>(delay.count() * u(rng_)));
    }
    BASALT_VLOG(2, "Retrying API request", "verb", request.verb, "path", request.path, "attempt",
                attempt + 1, "delay_ms", delay.count(), "result",
                result.ok() ? std::to_string(result->status_code)
                            : std::string(MessageOf(result.status())));
    clock_->SleepFor(delay);
  }
}

absl::StatusOr<Response> RetryingTransport::Stream(const Request& request,
                                                   const LineCallback& on_line,
                                                   CancelToken* cancel) {
  limiter_.Accept();
  return inner_->Stream(request, on_line, cancel);
}

}  // namespace basalt::client
