#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "common/resource/resource_list.h"
#include "scheduler/cache/binder.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/status_writer.h"

namespace basalt::sched::cache {
namespace {

constexpr char kBinding[] = "/api/v1/namespaces/ns/pods/p0/binding";

std::shared_ptr<const CachedPod> Pod(std::string node = "") {
  auto p = std::make_shared<CachedPod>();
  p->pod.namespace_name = "ns";
  p->pod.name = "p0";
  p->pod.uid = "uid-p0";
  p->pod.scheduler_name = "volcano";
  p->pod.node_name = std::move(node);
  p->pod.request.Set("nvidia.com/gpu", resource::Quantity::FromInt(1));
  return p;
}

std::shared_ptr<const api::CompactNode> Node() {
  auto n = std::make_shared<api::CompactNode>();
  n->name = "n1";
  n->allocatable.Set("nvidia.com/gpu", resource::Quantity::FromInt(1));
  return n;
}

int64_t IdleGpus(ClusterState& state) {
  return state.TakeSnapshot().cluster.nodes().at("n1").idle().Get("nvidia.com/gpu");
}

struct Fixture {
  Fixture() {
    auto fake = std::make_unique<client::FakeTransport>();
    transport = fake.get();
    client = std::make_unique<client::Client>(std::move(fake));
    state.UpsertNode(Node());
    state.UpsertPod(Pod());
  }
  client::FakeTransport* transport = nullptr;
  std::unique_ptr<client::Client> client;
  ClusterState state{{}};
};

TEST_CASE("ApiBinder: a successful bind keeps the placement until the watch confirms it",
          "[sched][cache][binder]") {
  Fixture f;
  f.transport->AddJson("POST", kBinding, 201, R"({"kind":"Status","status":"Success"})");
  std::atomic<int> ok{0};
  ApiBinder binder(f.client.get(), &f.state, nullptr, 2, [&](const BindResult& r) {
    if (r.ok) ++ok;
  });
  binder.Bind("ns/a", {BindRequest{"uid-p0", "ns", "p0", "n1"}});
  CHECK(IdleGpus(f.state) == 0);  // assumed at once
  binder.Shutdown();
  CHECK(ok == 1);
  REQUIRE(f.transport->requests().size() == 1);
  const client::Request r = f.transport->requests()[0];
  CHECK(r.verb == "POST");
  CHECK(r.body.find(R"("uid":"uid-p0")") != std::string::npos);
  CHECK(r.body.find(R"("name":"n1")") != std::string::npos);
  CHECK(IdleGpus(f.state) == 0);
  f.state.UpsertPod(Pod("n1"));
  CHECK(f.state.assumed_count() == 0);
  CHECK(IdleGpus(f.state) == 0);
}

TEST_CASE("ApiBinder: a failed bind rolls the assumed placement back", "[sched][cache][binder]") {
  Fixture f;
  f.transport->AddJson("POST", kBinding, 409,
                       R"({"kind":"Status","status":"Failure","reason":"Conflict",)"
                       R"("message":"pod p0 is already assigned to node n2","code":409})");
  std::atomic<int> failed{0};
  ApiBinder binder(f.client.get(), &f.state, nullptr, 1, [&](const BindResult& r) {
    if (!r.ok) ++failed;
  });
  const uint64_t before = f.state.generation();
  binder.Bind("ns/a", {BindRequest{"uid-p0", "ns", "p0", "n1"}});
  binder.Shutdown();
  CHECK(failed == 1);
  CHECK(IdleGpus(f.state) == 1000);
  CHECK(f.state.assumed_count() == 0);
  CHECK(f.state.generation() > before);  // a new cycle will try again
}

TEST_CASE("ApiBinder: a pod that vanished is not sent", "[sched][cache][binder]") {
  Fixture f;
  std::atomic<int> failed{0};
  ApiBinder binder(f.client.get(), &f.state, nullptr, 1, [&](const BindResult& r) {
    if (!r.ok) ++failed;
  });
  binder.Bind("ns/a", {BindRequest{"uid-gone", "ns", "gone", "n1"}});
  binder.Shutdown();
  CHECK(failed == 1);
  CHECK(f.transport->requests().empty());
}

TEST_CASE("ApiStatusWriter: writes through the status subresources and forgets failed writes",
          "[sched][cache][status]") {
  Fixture f;
  absl::StatusOr<api::Queue> q = api::Queue::Parse(
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},)"
      R"("spec":{"weight":1},"status":{"allocated":{"nvidia.com/gpu":"2"}}})");
  REQUIRE(q.ok());
  f.state.UpsertQueue(*q);
  f.transport->AddJson("PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/q/status", 200,
                       R"({"kind":"Queue"})");
  f.transport->AddJson("PATCH", "/api/v1/namespaces/ns/pods/p0/status", 500,
                       R"({"kind":"Status","status":"Failure","message":"boom","code":500})");
  f.transport->SetFallback([](const client::Request&) -> absl::StatusOr<client::Response> {
    return client::Response{500, {}, R"({"kind":"Status","message":"boom","code":500})"};
  });
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1);
  writer.UpdateQueueStatus(QueueStatusUpdate{"q", Resource()});
  writer.UpdatePodCondition(
      PodConditionUpdate{"uid-p0", "ns", "p0", PodScheduledCondition{"Unschedulable", "m", ""}});
  writer.Shutdown();

  bool queue_patched = false;
  bool pod_patched = false;
  const std::vector<client::Request> requests = f.transport->requests();
  for (const client::Request& r : requests) {
    if (r.path == "/apis/scheduling.volcano.sh/v1beta1/queues/q/status") {
      queue_patched = true;
      CHECK(r.verb == "PATCH");
      // The GPU that dropped to nothing is written explicitly: a merge patch keeps absent keys.
      CHECK(r.body == R"({"status":{"allocated":{"cpu":"0","memory":"0","nvidia.com/gpu":"0"}}})");
    }
    if (r.path == "/api/v1/namespaces/ns/pods/p0/status") {
      pod_patched = true;
      CHECK(r.body.find(R"("type":"PodScheduled")") != std::string::npos);
      CHECK(r.body.find(R"("reason":"Unschedulable")") != std::string::npos);
    }
  }
  CHECK(queue_patched);
  CHECK(pod_patched);
  ClusterState::Snapshot s = f.state.TakeSnapshot();
  CHECK(s.cluster.queues().at("q").status_allocated == Resource());  // written, kept
  // The pod write failed: the condition is forgotten so a later cycle writes it again.
  CHECK_FALSE(s.cluster.foreign_tasks().at("uid-p0").scheduled_condition.has_value());
}

}  // namespace
}  // namespace basalt::sched::cache
