// The job reconciler's controls on their own: the shared worker pool, pod expectations and the
// kind -> resource mapping of plugin objects.

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/client/resource.h"
#include "common/informer/store.h"
#include "controllers/job/controller/plugin_objects.h"
#include "controllers/job/controller/pod_control.h"
#include "controllers/job/controller/pod_group_control.h"
#include "controllers/job/controller/worker_pool.h"
#include "fmt/format.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;

TEST_CASE("WorkerPool: every index exactly once, at most the concurrency at a time",
          "[controllers][job-controller][controls]") {
  WorkerPool pool(4);
  CHECK(pool.started() == 0);  // threads start on demand
  for (size_t concurrency : {size_t{1}, size_t{3}, size_t{16}}) {
    INFO("concurrency " << concurrency);
    std::mutex mu;
    std::multiset<size_t> seen;
    std::atomic<int> in_flight{0}, most{0};
    pool.ParallelFor(100, concurrency, [&](size_t i) {
      const int now = ++in_flight;
      int m = most.load();
      while (now > m && !most.compare_exchange_weak(m, now)) {
      }
      {
        std::lock_guard<std::mutex> l(mu);
        seen.insert(i);
      }
      --in_flight;
    });
    REQUIRE(seen.size() == 100);
    for (size_t i = 0; i < 100; ++i) CHECK(seen.count(i) == 1);
    // The pool's 4 threads and the caller.
    CHECK(most.load() <= static_cast<int>(std::min<size_t>(concurrency, 5)));
  }
  pool.ParallelFor(0, 8, [&](size_t) { FAIL("called for n = 0"); });
  CHECK(pool.started() <= 4);
}

TEST_CASE("WorkerPool: no thread for work the caller does alone, at most the bound for more",
          "[controllers][job-controller][controls]") {
  WorkerPool pool(3);
  int calls = 0;
  pool.ParallelFor(5, 1, [&](size_t) { ++calls; });  // concurrency 1: the caller only
  CHECK(calls == 5);
  CHECK(pool.started() == 0);
  std::atomic<int> more{0};
  pool.ParallelFor(40, 8, [&](size_t) { ++more; });
  CHECK(more.load() == 40);
  CHECK(pool.started() >= 1);
  CHECK(pool.started() <= 3);
}

TEST_CASE("WorkerPool: callers on many threads share the pool",
          "[controllers][job-controller][controls]") {
  WorkerPool pool(2);
  std::atomic<int> calls{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] { pool.ParallelFor(50, 8, [&](size_t) { ++calls; }); });
  }
  for (std::thread& t : callers) t.join();
  CHECK(calls.load() == 200);
}

JobPodInfo Seen(std::string name, std::string uid) {
  JobPodInfo p;
  p.name = std::move(name);
  p.uid = std::move(uid);
  p.phase = "Running";
  return p;
}

TEST_CASE("PodExpectations: created pods count until seen, deleted ones until gone",
          "[controllers][job-controller][controls]") {
  const api::Job job = MakeJob("train").Task(MakeTask("worker").Replicas(3)).Build();
  const Clock::TimePoint t0{};
  PodExpectations e;
  e.ExpectCreated("train-worker-1", t0);
  e.ExpectDeleted("train-worker-0", "uid-0");

  std::vector<JobPodInfo> pods = {Seen("train-worker-0", "uid-0")};
  e.Observe(job, t0, pods);
  REQUIRE(pods.size() == 2);
  CHECK(pods[0].terminating);  // deleted by us, still listed
  CHECK(pods[1].name == "train-worker-1");
  CHECK(pods[1].task == "worker");
  CHECK(pods[1].phase == "Pending");
  CHECK(pods[1].job_uid == job.uid());

  // The cache caught up: the created pod is listed, the deleted one is gone.
  pods = {Seen("train-worker-1", "uid-1")};
  e.Observe(job, t0, pods);
  REQUIRE(pods.size() == 1);
  CHECK_FALSE(pods[0].terminating);
  // A re-created pod of the same name (another UID) is not taken for the deleted one.
  pods = {Seen("train-worker-0", "uid-0b")};
  e.Observe(job, t0, pods);
  REQUIRE(pods.size() == 1);
  CHECK_FALSE(pods[0].terminating);

  // Expired creations are no longer expected.
  e.ExpectCreated("train-worker-2", t0);
  pods.clear();
  e.Observe(job, t0 + PodExpectations::kCreatedExpectation + std::chrono::seconds(1), pods);
  CHECK(pods.empty());
}

TEST_CASE("ResourceForKind: the plural of the kinds job plugins create",
          "[controllers][job-controller][controls]") {
  CHECK(client::ResourceForKind("v1", "ConfigMap") == client::ConfigMaps());
  CHECK(client::ResourceForKind("v1", "Service") == client::Services());
  CHECK(client::ResourceForKind("v1", "Secret") == client::Secrets());
  const client::ResourceRef np = client::ResourceForKind("networking.k8s.io/v1", "NetworkPolicy");
  CHECK(np.group == "networking.k8s.io");
  CHECK(np.version == "v1");
  CHECK(np.resource == "networkpolicies");
  CHECK(client::ResourceForKind("networking.k8s.io/v1", "Ingress").resource == "ingresses");
  CHECK(client::ResourcePath(np, "ns", "j") ==
        "/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies/j");
}

TEST_CASE("IsJsonSubset: fields the API server added are no difference",
          "[controllers][job-controller][controls]") {
  auto want = json::Parse(R"({"spec":{"ports":[{"port":22}],"clusterIP":"None"}})");
  auto have = json::Parse(
      R"({"spec":{"ports":[{"port":22}],"clusterIP":"None","sessionAffinity":"None"}})");
  auto other = json::Parse(R"({"spec":{"ports":[{"port":23}],"clusterIP":"None"}})");
  CHECK(IsJsonSubset(*want, *have));
  CHECK_FALSE(IsJsonSubset(*have, *want));
  CHECK_FALSE(IsJsonSubset(*want, *other));
}

TEST_CASE("PodGroupControl: the newest True condition but Scheduled says why a gang waits",
          "[controllers][job-controller][controls]") {
  informer::Store store;
  PodGroupControl control(nullptr, &store);
  const api::Job job = MakeJob("train").Build();
  auto put = [&](std::string_view conditions) {
    auto doc = json::Parse(fmt::format(
        R"({{"metadata":{{"name":"{}","namespace":"{}"}},"status":{{"conditions":{}}}}})",
        job.name(), job.namespace_name(), conditions));
    REQUIRE(doc.ok());
    const std::string key = fmt::format("{}/{}", job.namespace_name(), job.name());
    store.Upsert(
        informer::Object::Make<json::Document>(key, "1", informer::ShareDocument(std::move(*doc))));
  };
  CHECK_FALSE(control.PendingCondition(job).has_value());  // no PodGroup
  // Times compare as times, not strings: the fractional one is the newer.
  put(R"([{"type":"Unschedulable","status":"True","message":"0/4 nodes are available",
           "lastTransitionTime":"2026-12-02T10:00:00.5Z"},
          {"type":"Inqueue","status":"True","message":"admitted",
           "lastTransitionTime":"2026-12-02T10:00:00Z"},
          {"type":"Unschedulable","status":"False","message":"old",
           "lastTransitionTime":"2026-12-02T11:00:00Z"}])");
  std::optional<api::Condition> c = control.PendingCondition(job);
  REQUIRE(c.has_value());
  CHECK(c->type == "Unschedulable");
  CHECK(c->message == "0/4 nodes are available");
  put(R"([{"type":"Unschedulable","status":"True","lastTransitionTime":"2026-12-02T10:00:00Z"},
          {"type":"Scheduled","status":"True","lastTransitionTime":"2026-12-02T10:00:05Z"}])");
  CHECK_FALSE(control.PendingCondition(job).has_value());
  put("[]");
  CHECK_FALSE(control.PendingCondition(job).has_value());
}

}  // namespace
}  // namespace basalt::controllers
