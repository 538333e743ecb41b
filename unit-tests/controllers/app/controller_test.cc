// vc-controller-manager's wiring: --controllers resolution, Lease names, the worker loop.

#include "controllers/app/controller.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <vector>

#include "controllers/app/reconcile_loop.h"
#include "prometheus/registry.h"

namespace basalt::controllers {
namespace {

const std::vector<std::string> kKnown = {"cronjob", "gc", "job", "podgroup", "queue"};

TEST_CASE("ResolveControllers: default and '*' mean all, names are sorted and de-duplicated",
          "[controllers][app]") {
  CHECK(*ResolveControllers({"*"}, kKnown) == kKnown);
  CHECK(*ResolveControllers({}, kKnown) == kKnown);
  CHECK(*ResolveControllers({"queue", "job", "queue"}, kKnown) ==
        std::vector<std::string>{"job", "queue"});
}

TEST_CASE("ResolveControllers: an unknown name is an error naming it", "[controllers][app]") {
  absl::StatusOr<std::vector<std::string>> r = ResolveControllers({"job", "jobs"}, kKnown);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find("\"jobs\"") != std::string::npos);
}

TEST_CASE("LeaseNameFor: one Lease per controller set, independent of flag order",
          "[controllers][app]") {
  CHECK(LeaseNameFor({"queue", "job"}) == "vc-controller-manager-job-queue");
  CHECK(LeaseNameFor({"job", "queue"}) == "vc-controller-manager-job-queue");
  CHECK(LeaseNameFor(kKnown) == "vc-controller-manager-cronjob-gc-job-podgroup-queue");
}

TEST_CASE("LeaseNameFor: jobflow does not change the Lease of a controller set",
          "[controllers][app]") {
  CHECK(LeaseNameFor({"cronjob", "gc", "job", "jobflow", "podgroup", "queue"}) ==
        "vc-controller-manager-cronjob-gc-job-podgroup-queue");
  CHECK(LeaseNameFor({"jobflow", "job"}) == "vc-controller-manager-job");
}

TEST_CASE("NewControllerRegistry: the seven controllers", "[controllers][app]") {
  std::vector<std::string> names;
  for (const auto& [name, f] : NewControllerRegistry()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"cronjob", "gc", "hypernode", "job", "jobflow",
                                          "podgroup", "queue"});
}

TEST_CASE("ParallelFor: every index exactly once", "[controllers][app]") {
  std::mutex mu;
  std::map<size_t, int> seen;
  ParallelFor(100, 8, [&](size_t i) {
    std::lock_guard<std::mutex> l(mu);
    ++seen[i];
  });
  REQUIRE(seen.size() == 100);
  for (const auto& [i, n] : seen) CHECK(n == 1);
  ParallelFor(0, 8, [&](size_t) { FAIL("called for n = 0"); });
}

TEST_CASE("ReconcileLoop: failures are retried, successes counted", "[controllers][app]") {
  FakeClock clock;
  prometheus::Registry registry;
  ReconcileMetrics metrics(registry);
  int calls = 0;
  ReconcileLoop loop(
      {.name = "test", .clock = &clock, .metrics = &metrics, .queue_metrics = nullptr},
      [&](const std::string&) -> ReconcileResult {
        if (++calls == 1) return absl::UnavailableError("try again");
        return std::optional<Clock::Duration>();
      });
  loop.Add("a");
  REQUIRE(loop.ProcessNext());
  CHECK(calls == 1);
  CHECK(loop.queue().NumRequeues("a") == 1);
  clock.Advance(std::chrono::seconds(1));  // past the first backoff
  REQUIRE(loop.ProcessNext());
  CHECK(calls == 2);
  CHECK(loop.queue().NumRequeues("a") == 0);
  const auto series = metrics.For("test");
  CHECK(series.success->Value() == 1);
  CHECK(series.error->Value() == 1);
}

TEST_CASE("ReconcileLoop: a key failing max_requeues retries in a row is dropped once",
          "[controllers][app]") {
  FakeClock clock;
  int calls = 0;
  std::vector<std::string> dropped;
  ReconcileLoop loop({.name = "limit",
                      .clock = &clock,
                      .metrics = nullptr,
                      .queue_metrics = nullptr,
                      .max_requeues = 3,
                      .on_drop =
                          [&](const std::string& key, const absl::Status& s) {
                            dropped.push_back(key + ": " + std::string(s.message()));
                          }},
                     [&](const std::string&) -> ReconcileResult {
                       ++calls;
                       return absl::InvalidArgumentError("Pod is invalid");
                     });
  loop.Add("ns/bad");
  // The first visit and three rate-limited retries, each after its backoff.
  for (int i = 0; i < 4; ++i) {
    clock.Advance(std::chrono::minutes(20));  // past any backoff
    REQUIRE(loop.ProcessNext());
  }
  CHECK(calls == 4);
  CHECK(dropped == std::vector<std::string>{"ns/bad: Pod is invalid"});
  // Dropped: no retry is scheduled, the backoff is reset.
  CHECK(loop.queue().NumRequeues("ns/bad") == 0);
  CHECK(loop.queue().Len() == 0);
  // The next event about the key brings it back, with a fresh retry budget.
  loop.Add("ns/bad");
  REQUIRE(loop.ProcessNext());
  CHECK(calls == 5);
  CHECK(loop.queue().NumRequeues("ns/bad") == 1);
}

TEST_CASE("ReconcileLoop: max_requeues -1 retries without limit", "[controllers][app]") {
  FakeClock clock;
  int calls = 0;
  bool dropped = false;
  ReconcileLoop loop({.name = "unlimited",
                      .clock = &clock,
                      .metrics = nullptr,
                      .queue_metrics = nullptr,
                      .max_requeues = -1,
                      .on_drop = [&](const std::string&, const absl::Status&) { dropped = true; }},
                     [&](const std::string&) -> ReconcileResult {
                       ++calls;
                       return absl::UnavailableError("down");
                     });
  loop.Add("k");
  for (int i = 0; i < 20; ++i) {
    clock.Advance(std::chrono::hours(1));
    REQUIRE(loop.ProcessNext());
  }
  CHECK(calls == 20);
  CHECK_FALSE(dropped);
  CHECK(loop.queue().NumRequeues("k") == 20);
}

TEST_CASE("ReconcileLoop: a requested delay brings the key back later", "[controllers][app]") {
  FakeClock clock;
  int calls = 0;
  ReconcileLoop loop(
      {.name = "delay", .clock = &clock, .metrics = nullptr, .queue_metrics = nullptr},
      [&](const std::string&) -> ReconcileResult {
        ++calls;
        return std::optional<Clock::Duration>(std::chrono::seconds(30));
      });
  loop.Add("k");
  REQUIRE(loop.ProcessNext());
  CHECK(loop.queue().Len() == 0);
  clock.Advance(std::chrono::seconds(31));
  REQUIRE(loop.ProcessNext());  // blocks until the delay thread moves the key
  CHECK(calls == 2);
}

}  // namespace
}  // namespace basalt::controllers

namespace basalt::controllers {
namespace {

TEST_CASE("TrimPodForControllers: keeps what the controllers read, drops the rest",
          "[controllers][app]") {
  json::Document pod = *json::Parse(R"({
    "apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","namespace":"ns","uid":"u","annotations":{"a":"b"},
                "managedFields":[{"manager":"kubectl"}],"deletionTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"schedulerName":"volcano","nodeName":"n1","volumes":[{"name":"v"}],
            "containers":[{"name":"c","image":"busybox","env":[{"name":"X"}],
                           "resources":{"requests":{"cpu":"1"}}}]},
    "status":{"phase":"Failed","conditions":[{"type":"Ready"}],
              "containerStatuses":[{"name":"c","ready":false,"restartCount":2,"image":"busybox",
                                    "state":{"terminated":{"exitCode":3,"reason":"Error"}}}]}})");
  json::Document t = TrimPodForControllers(pod);
  CHECK(json::FindPath(t, {"metadata", "managedFields"}) == nullptr);
  CHECK(json::FindPath(t, {"metadata", "deletionTimestamp"}) != nullptr);
  CHECK(json::AsView(*json::FindPath(t, {"metadata", "annotations", "a"})) == "b");
  CHECK(json::AsView(*json::FindPath(t, {"spec", "schedulerName"})) == "volcano");
  CHECK(json::FindPath(t, {"spec", "volumes"}) == nullptr);
  const json::Value& c = *json::FindPath(t, {"spec", "containers"})->Begin();
  CHECK(json::Find(c, "image") == nullptr);
  CHECK(json::AsView(*json::FindPath(c, {"resources", "requests", "cpu"})) == "1");
  CHECK(json::FindPath(t, {"status", "conditions"}) == nullptr);
  const json::Value& cs = *json::FindPath(t, {"status", "containerStatuses"})->Begin();
  CHECK(json::GetInt(cs, "restartCount") == 2);
  CHECK(json::GetInt(*json::FindPath(cs, {"state", "terminated"}), "exitCode") == 3);
  CHECK(json::Find(cs, "image") == nullptr);
}

TEST_CASE("TrimPodForControllers: keeps the PodScheduled condition's type and status alone",
          "[controllers][app]") {
  json::Document pod = *json::Parse(R"({
    "apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},
    "status":{"phase":"Pending","conditions":[
      {"type":"Ready","status":"False"},
      {"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes"}]}})");
  json::Document t = TrimPodForControllers(pod);
  const json::Value* conditions = json::FindPath(t, {"status", "conditions"});
  REQUIRE(conditions != nullptr);
  REQUIRE(conditions->Size() == 1);
  const json::Value& c = *conditions->Begin();
  CHECK(json::GetString(c, "type") == "PodScheduled");
  CHECK(json::GetString(c, "status") == "False");
  CHECK(json::Find(c, "message") == nullptr);
}

}  // namespace
}  // namespace basalt::controllers
