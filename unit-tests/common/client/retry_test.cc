#include "common/client/retry.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <thread>

#include "common/client/testing/fake_transport.h"
#include "common/util/clock.h"

using basalt::FakeClock;
using basalt::client::DecideRetry;
using basalt::client::FakeTransport;
using basalt::client::Request;
using basalt::client::Response;
using basalt::client::RetryingTransport;
using basalt::client::RetryPolicy;
using std::chrono::milliseconds;

namespace {

Request Req(std::string verb) {
  Request r;
  r.verb = std::move(verb);
  r.path = "/api/v1/namespaces/ns/pods";
  return r;
}

absl::StatusOr<Response> Code(int code, std::string retry_after = "") {
  Response r;
  r.status_code = code;
  if (!retry_after.empty()) r.headers.emplace_back("Retry-After", retry_after);
  return r;
}

}  // namespace

TEST_CASE("DecideRetry: 429 is retried for every verb and honours Retry-After", "[retry]") {
  RetryPolicy policy;
  for (const char* verb : {"GET", "POST", "PATCH", "PUT", "DELETE"}) {
    auto d = DecideRetry(policy, Req(verb), 0, Code(429, "3"));
    REQUIRE(d.retry);
    REQUIRE(d.from_retry_after);
    REQUIRE(d.delay == milliseconds(3000));
  }
  // Without Retry-After: exponential backoff.
  auto d = DecideRetry(policy, Req("POST"), 2, Code(429));
  REQUIRE(d.retry);
  REQUIRE_FALSE(d.from_retry_after);
  REQUIRE(d.delay == milliseconds(400));
  // A huge Retry-After is capped.
  REQUIRE(DecideRetry(policy, Req("GET"), 0, Code(429, "3600")).delay == milliseconds(30000));
}

TEST_CASE("DecideRetry: 5xx and connection errors only for idempotent verbs", "[retry]") {
  RetryPolicy policy;
  for (int code : {500, 502, 503, 504}) {
    REQUIRE(DecideRetry(policy, Req("GET"), 0, Code(code)).retry);
    REQUIRE(DecideRetry(policy, Req("PUT"), 0, Code(code)).retry);
    REQUIRE(DecideRetry(policy, Req("DELETE"), 0, Code(code)).retry);
    REQUIRE_FALSE(DecideRetry(policy, Req("POST"), 0, Code(code)).retry);
    REQUIRE_FALSE(DecideRetry(policy, Req("PATCH"), 0, Code(code)).retry);
  }
  absl::StatusOr<Response> refused = absl::UnavailableError("connection refused");
  absl::StatusOr<Response> timeout = absl::DeadlineExceededError("timed out");
  REQUIRE(DecideRetry(policy, Req("GET"), 0, refused).retry);
  REQUIRE(DecideRetry(policy, Req("GET"), 0, timeout).retry);
  REQUIRE_FALSE(DecideRetry(policy, Req("POST"), 0, refused).retry);
  // Bad requests are never retried.
  REQUIRE_FALSE(
      DecideRetry(policy, Req("GET"), 0, absl::StatusOr<Response>(absl::InvalidArgumentError("x")))
          .retry);
  for (int code : {200, 201, 400, 401, 403, 404, 409, 410, 422, 501}) {
    REQUIRE_FALSE(DecideRetry(policy, Req("GET"), 0, Code(code)).retry);
  }
}

TEST_CASE("DecideRetry: backoff doubles up to the cap and stops after max_retries", "[retry]") {
  RetryPolicy policy;
  policy.max_retries = 8;
  std::vector<long> delays;
  for (int attempt = 0; attempt < 8; ++attempt) {
    delays.push_back(DecideRetry(policy, Req("GET"), attempt, Code(503)).delay.count());
  }
  REQUIRE(delays == std::vector<long>{100, 200, 400, 800, 1600, 3200, 5000, 5000});
  REQUIRE_FALSE(DecideRetry(policy, Req("GET"), 8, Code(503)).retry);
  Request no_retry = Req("GET");
  no_retry.max_retries = 0;
  REQUIRE_FALSE(DecideRetry(policy, no_retry, 0, Code(429)).retry);
}

TEST_CASE("RetryingTransport: a 503 then a 200 returns the 200 after the backoff", "[retry]") {
  FakeClock clock;
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", "", 503, "{}");
  t->AddJson("GET", "", 429, "{}");
  t->AddJson("GET", "", 200, "{\"ok\":true}");
  RetryPolicy policy;
  policy.jitter = 0;
  RetryingTransport transport(std::move(fake), policy, /*qps=*/0, 1, &clock);

  absl::StatusOr<Response> result;
  std::thread caller([&] { result = transport.Do(Req("GET")); });
  clock.WaitForSleeps(1);  // backoff after the 503: 100ms
  clock.Advance(milliseconds(100));
  clock.WaitForSleeps(2);  // backoff after the 429: 200ms
  REQUIRE(t->requests().size() == 2);
  clock.Advance(milliseconds(200));
  caller.join();
  REQUIRE(result.ok());
  REQUIRE(result->status_code == 200);
  REQUIRE(t->requests().size() == 3);
}

TEST_CASE("RetryingTransport: a POST that gets a 500 is not retried", "[retry]") {
  FakeClock clock;
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("POST", "", 500, "{}");
  RetryingTransport transport(std::move(fake), RetryPolicy{}, 0, 1, &clock);
  absl::StatusOr<Response> result = transport.Do(Req("POST"));
  REQUIRE(result.ok());
  REQUIRE(result->status_code == 500);
  REQUIRE(t->requests().size() == 1);
}

TEST_CASE("DecideRetry: a request that never reached the server is retried whatever the verb",
          "[retry]") {
  RetryPolicy policy;
  absl::StatusOr<Response> refused = basalt::client::MarkRequestNotSent(
      absl::UnavailableError("POST /api/v1/namespaces/ns/pods: connecting to 10.0.0.1:6443: "
                             "Connection refused"));
  absl::StatusOr<Response> write_timeout = basalt::client::MarkRequestNotSent(
      absl::DeadlineExceededError("POST /api/v1/namespaces/ns/pods: sending request: timed out"));
  for (const char* verb : {"POST", "PATCH", "GET"}) {
    INFO(verb);
    CHECK(DecideRetry(policy, Req(verb), 0, refused).retry);
    CHECK(DecideRetry(policy, Req(verb), 0, write_timeout).retry);
    CHECK_FALSE(DecideRetry(policy, Req(verb), policy.max_retries, refused).retry);  // bounded
  }
  // Marking keeps the code and message, and a request that may have been sent is not marked.
  CHECK(refused.status().code() == absl::StatusCode::kUnavailable);
  CHECK(basalt::client::RequestNotSent(refused.status()));
  CHECK_FALSE(basalt::client::RequestNotSent(absl::UnavailableError("reading response")));
  CHECK(basalt::client::MarkRequestNotSent(absl::OkStatus()).ok());
  // A certificate that does not verify is not transient, sent or not.
  CHECK_FALSE(DecideRetry(policy, Req("POST"), 0,
                          absl::StatusOr<Response>(basalt::client::MarkRequestNotSent(
                              absl::FailedPreconditionError("TLS handshake failed"))))
                  .retry);
}

TEST_CASE("RetryingTransport: a POST refused before it was sent is sent again after backoff",
          "[retry]") {
  FakeClock clock;
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddResponse("POST", "",
                 basalt::client::MarkRequestNotSent(absl::UnavailableError("connection refused")));
  t->AddJson("POST", "", 201, "{}");
  RetryPolicy policy;
  policy.jitter = 0;
  RetryingTransport transport(std::move(fake), policy, /*qps=*/0, 1, &clock);
  absl::StatusOr<Response> result;
  std::thread caller([&] { result = transport.Do(Req("POST")); });
  clock.WaitForSleepers(1);
  clock.Advance(milliseconds(100));
  caller.join();
  REQUIRE(result.ok());
  CHECK(result->status_code == 201);
  CHECK(t->requests().size() == 2);
}

TEST_CASE("RetryingTransport: requests beyond the burst wait for the rate limiter", "[retry]") {
  FakeClock clock;
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->SetFallback([](const Request&) { return Code(200); });
  RetryingTransport transport(std::move(fake), RetryPolicy{}, /*qps=*/10, /*burst=*/2, &clock);
  REQUIRE(transport.Do(Req("GET")).ok());
  REQUIRE(transport.Do(Req("GET")).ok());
  std::atomic<bool> done{false};
  bool ok = false;
  std::thread caller([&] {
    ok = transport.Do(Req("GET")).ok();
    done = true;
  });
  clock.WaitForSleepers(1);
  REQUIRE_FALSE(done);
  REQUIRE(t->requests().size() == 2);
  clock.Advance(milliseconds(100));
  caller.join();
  REQUIRE(ok);
  REQUIRE(t->requests().size() == 3);
}
