// The default queue every Basalt component creates at start-up, against a FakeTransport.
#include "common/ctrlkit/default_queue.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "common/client/testing/fake_transport.h"
#include "common/util/clock.h"
#include "common/util/json.h"

namespace basalt::ctrlkit {
namespace {

using client::FakeTransport;

std::string NotFound() {
  return R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})";
}

constexpr char kDefaultQueue[] = "/apis/scheduling.volcano.sh/v1beta1/queues/default";
constexpr char kQueues[] = "/apis/scheduling.volcano.sh/v1beta1/queues";

TEST_CASE("EnsureDefaultQueue: leaves an existing default queue alone", "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kDefaultQueue, 200, R"({"metadata":{"name":"default"},"spec":{"weight":7}})");
  client::Client client(std::move(fake));
  CHECK(EnsureDefaultQueue(client).ok());
  CHECK(t->requests().size() == 1);
}

TEST_CASE("EnsureDefaultQueue: creates weight 1, reclaimable, then opens it", "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kDefaultQueue, 404, NotFound());
  t->AddJson("POST", kQueues, 201, "{}");
  t->AddJson("PATCH", std::string(kDefaultQueue) + "/status", 200, "{}");
  client::Client client(std::move(fake));
  CHECK(EnsureDefaultQueue(client).ok());
  REQUIRE(t->requests().size() == 3);
  auto created = json::Parse(t->requests()[1].body);
  REQUIRE(created.ok());
  const json::Value& spec = *json::Find(*created, "spec");
  CHECK(json::GetInt(spec, "weight") == 1);
  CHECK(json::GetBool(spec, "reclaimable"));
  CHECK(t->requests()[2].body.find("\"Open\"") != std::string::npos);
}

TEST_CASE(
    "EnsureDefaultQueue: AlreadyExists (a concurrent creator) is success, a status "
    "write it may not do is not an error",
    "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  fake->AddJson("GET", kDefaultQueue, 404, NotFound());
  fake->AddJson("POST", kQueues, 409,
                R"({"kind":"Status","status":"Failure","reason":"AlreadyExists","code":409})");
  client::Client client(std::move(fake));
  CHECK(EnsureDefaultQueue(client).ok());

  auto forbidden = std::make_unique<FakeTransport>();
  forbidden->AddJson("GET", kDefaultQueue, 404, NotFound());
  forbidden->AddJson("POST", kQueues, 201, "{}");
  forbidden->AddJson("PATCH", std::string(kDefaultQueue) + "/status", 403,
                     R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})");
  client::Client client2(std::move(forbidden));
  CHECK(EnsureDefaultQueue(client2).ok());
}

TEST_CASE("EnsureDefaultQueue: other errors are returned (the caller retries)", "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  fake->AddJson("GET", kDefaultQueue, 404, NotFound());
  fake->AddJson(
      "POST", kQueues, 500,
      R"({"kind":"Status","status":"Failure","message":"failed calling webhook","code":500})");
  client::Client client(std::move(fake));
  CHECK_FALSE(EnsureDefaultQueue(client).ok());
}

TEST_CASE("EnsureDefaultQueue: another name (the scheduler's --default-queue)", "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/batch", 404, NotFound());
  t->AddJson("POST", kQueues, 201, "{}");
  t->AddJson("PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/batch/status", 200, "{}");
  client::Client client(std::move(fake));
  CHECK(EnsureDefaultQueue(client, "batch").ok());
  REQUIRE(t->requests().size() == 3);
  auto created = json::Parse(t->requests()[1].body);
  REQUIRE(created.ok());
  CHECK(json::GetString(*json::Find(*created, "metadata"), "name") == "batch");
}

TEST_CASE("EnsureDefaultQueueWithRetry: retries until the create is admitted", "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  // The webhook is not reachable yet: the API server answers the create with a 500.
  t->AddJson("GET", kDefaultQueue, 404, NotFound());
  t->AddJson(
      "POST", kQueues, 500,
      R"({"kind":"Status","status":"Failure","message":"failed calling webhook","code":500})");
  t->AddJson("GET", kDefaultQueue, 404, NotFound());
  t->AddJson("POST", kQueues, 201, "{}");
  t->AddJson("PATCH", std::string(kDefaultQueue) + "/status", 200, "{}");
  client::Client client(std::move(fake));
  std::stop_source never;
  // The retry waits 500 ms on the fake clock: advanced once the back-off is armed.
  FakeClock clock;
  std::thread advancer([&] {
    if (clock.WaitForTimers(1)) clock.Advance(std::chrono::milliseconds(500));
  });
  CHECK(EnsureDefaultQueueWithRetry(never.get_token(), client, kDefaultQueueName, &clock));
  advancer.join();
  CHECK(t->requests().size() == 5);
}

TEST_CASE("EnsureDefaultQueueWithRetry: returns false once stopped", "[default-queue]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kDefaultQueue, 403,
             R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})");
  client::Client client(std::move(fake));
  std::stop_source stop;
  stop.request_stop();
  CHECK_FALSE(EnsureDefaultQueueWithRetry(stop.get_token(), client));
  CHECK(t->requests().empty());
}

}  // namespace
}  // namespace basalt::ctrlkit
