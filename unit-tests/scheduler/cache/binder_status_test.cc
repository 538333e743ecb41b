#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "common/resource/resource_list.h"
#include "common/util/clock.h"
#include "fmt/format.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "scheduler/cache/binder.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/evictor.h"
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

// p0 is a bare pod of ours: the task of its shadow job (issue 17); a pod with a PodGroup or
// another scheduler's would be found in its job or among the foreign tasks.
const TaskInfo* FindP0(const ClusterState::Snapshot& s) {
  if (auto it = s.cluster.foreign_tasks().find("uid-p0"); it != s.cluster.foreign_tasks().end()) {
    return &it->second;
  }
  for (const auto& [id, job] : s.cluster.jobs()) {
    if (auto it = job.tasks().find("uid-p0"); it != job.tasks().end()) return &it->second;
  }
  return nullptr;
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

TEST_CASE(
    "ApiBinder: with bare-pod-podgroups a bare pod's binding names its PodGroup-to-be, and "
    "nothing else's does",
    "[sched][cache][binder]") {
  constexpr std::string_view kAnnotation =
      R"("annotations":{"scheduling.k8s.io/group-name":"podgroup-uid-p0"})";
  auto bind_body = [](bool flag, std::shared_ptr<const CachedPod> pod) {
    Fixture f;
    f.state.UpsertPod(std::move(pod));
    f.transport->AddJson("POST", kBinding, 201, R"({"kind":"Status","status":"Success"})");
    ApiBinder binder(f.client.get(), &f.state, nullptr, 1, {}, nullptr, flag);
    binder.Bind("ns/podgroup-uid-p0", {BindRequest{"uid-p0", "ns", "p0", "n1"}});
    binder.Shutdown();
    REQUIRE(f.transport->requests().size() == 1);
    return f.transport->requests()[0].body;
  };
  // A bare pod of ours with no group annotation: the annotation rides on the binding.
  CHECK(bind_body(true, Pod()).find(kAnnotation) != std::string::npos);
  // The flag off: a plain binding.
  CHECK(bind_body(false, Pod()).find("group-name") == std::string::npos);
  // What the binder asks the cache: only a bare pod of ours with no group annotation yet.
  ClusterState state{{}};
  state.UpsertPod(Pod());
  CHECK(state.BarePodGroupName("uid-p0") == "podgroup-uid-p0");
  CHECK(state.BarePodGroupName("uid-unknown").empty());
  // Already naming its group (the controller's PATCH came first, or a vcjob's pod).
  auto grouped = std::make_shared<CachedPod>(*Pod());
  grouped->pod.group_name = "job-a";
  state.UpsertPod(grouped);
  CHECK(state.BarePodGroupName("uid-p0").empty());
  // Owned (a ReplicaSet's): it waits for its PodGroup and is never annotated by the scheduler.
  auto owned = std::make_shared<CachedPod>(*Pod());
  owned->pod.owner_uid = "rs-uid";
  state.UpsertPod(owned);
  CHECK(state.BarePodGroupName("uid-p0").empty());
  // Another scheduler's.
  auto other = std::make_shared<CachedPod>(*Pod());
  other->pod.scheduler_name = "default-scheduler";
  state.UpsertPod(other);
  CHECK(state.BarePodGroupName("uid-p0").empty());
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
  const TaskInfo* p0 = FindP0(s);
  REQUIRE(p0 != nullptr);
  CHECK_FALSE(p0->scheduled_condition.has_value());
}

// ---- PodGroup status on Volcano's own CRD (no status subresource), issue 11 defect 7 ----------

constexpr char kPgStatus[] =
    "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg/status";
constexpr char kPg[] = "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg";
constexpr char kDiscovery[] = "/apis/scheduling.volcano.sh/v1beta1";
constexpr char kNotFound[] =
    R"({"kind":"Status","status":"Failure","reason":"NotFound","message":"not found","code":404})";
// What the API server lists for Volcano's CRDs: queues/status, but no podgroups/status.
constexpr char kVolcanoResources[] =
    R"({"kind":"APIResourceList","groupVersion":"scheduling.volcano.sh/v1beta1","resources":[)"
    R"({"name":"podgroups","namespaced":true,"kind":"PodGroup","verbs":["get","patch","update"]},)"
    R"({"name":"queues","namespaced":false,"kind":"Queue","verbs":["get","patch"]},)"
    R"({"name":"queues/status","namespaced":false,"kind":"Queue","verbs":["get","patch"]}]})";
constexpr char kBasaltResources[] =
    R"({"kind":"APIResourceList","groupVersion":"scheduling.volcano.sh/v1beta1","resources":[)"
    R"({"name":"podgroups","namespaced":true,"kind":"PodGroup","verbs":["get","patch"]},)"
    R"({"name":"podgroups/status","namespaced":true,"kind":"PodGroup","verbs":["get","patch"]}]})";

std::string PodGroupJson(std::string_view phase) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",)"
      R"("metadata":{{"name":"pg","namespace":"ns","uid":"pg-uid","resourceVersion":"7"}},)"
      R"("spec":{{"minMember":1,"queue":"default"}},"status":{{"phase":"{}"}}}})",
      phase);
}

// The value of a counter or gauge with exactly `labels`, or -1 if there is no such series.
double MetricValue(prometheus::Registry& registry, const std::string& name,
                   const std::map<std::string, std::string>& labels) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      std::map<std::string, std::string> got;
      for (const auto& l : m.label) got[l.name] = l.value;
      if (got != labels) continue;
      return family.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return -1;
}

struct PodGroupFixture : Fixture {
  PodGroupFixture() {
    absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(PodGroupJson("Pending"));
    REQUIRE(pg.ok());
    state.UpsertPodGroup(std::make_shared<const api::PodGroup>(*std::move(pg)));
  }
  PodGroupStatusUpdate Running() const {
    PodGroupStatus status;
    status.phase = PodGroupPhase::kRunning;
    status.running = 1;
    return PodGroupStatusUpdate{"ns/pg", "ns", "pg", status};
  }
  PodGroupPhase PhaseInCache() {
    return state.TakeSnapshot().cluster.jobs().at("ns/pg").podgroup_status.phase;
  }
  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    for (const client::Request& r : transport->requests()) out.push_back(r.verb + " " + r.path);
    return out;
  }
  prometheus::Registry registry;
};

TEST_CASE(
    "ApiStatusWriter: on Volcano's PodGroup CRD a 404 from /status while the PodGroup "
    "exists switches to writing the PodGroup itself",
    "[sched][cache][status]") {
  PodGroupFixture f;
  f.transport->AddJson("PATCH", kPgStatus, 404, kNotFound);
  f.transport->AddJson("GET", kPg, 200, PodGroupJson("Pending"));
  f.transport->AddJson("GET", kDiscovery, 200, kVolcanoResources);
  f.transport->AddJson("PATCH", kPg, 200, PodGroupJson("Running"));
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1, &f.registry);
  writer.UpdatePodGroupStatus(f.Running());
  writer.Shutdown();

  CHECK(f.Calls() ==
        std::vector<std::string>{std::string("PATCH ") + kPgStatus, std::string("GET ") + kPg,
                                 std::string("GET ") + kDiscovery, std::string("PATCH ") + kPg});
  const client::Request last = f.transport->last_request();
  CHECK(last.body.find(R"("phase":"Running")") != std::string::npos);
  CHECK(last.body.find(R"("running":1)") != std::string::npos);
  CHECK_FALSE(writer.podgroup_status_subresource());
  CHECK(MetricValue(f.registry, "basalt_scheduler_podgroup_status_subresource", {}) == 0);
  CHECK(MetricValue(f.registry, "basalt_scheduler_status_writes_dropped_total",
                    {{"kind", "podgroup"}, {"reason", "deleted"}}) == -1);
  CHECK(f.PhaseInCache() == PodGroupPhase::kRunning);  // written, not forgotten
}

TEST_CASE(
    "ApiStatusWriter: detected at start-up, Volcano's CRD gets PodGroup status written on "
    "the object without trying /status",
    "[sched][cache][status]") {
  PodGroupFixture f;
  f.transport->AddJson("GET", kDiscovery, 200, kVolcanoResources);
  f.transport->AddJson("PATCH", kPg, 200, PodGroupJson("Running"));
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1, &f.registry);
  CHECK(MetricValue(f.registry, "basalt_scheduler_podgroup_status_subresource", {}) == 1);
  REQUIRE(writer.DetectPodGroupStatusSubresource().ok());
  CHECK_FALSE(writer.podgroup_status_subresource());
  writer.UpdatePodGroupStatus(f.Running());
  writer.Shutdown();
  CHECK(f.Calls() ==
        std::vector<std::string>{std::string("GET ") + kDiscovery, std::string("PATCH ") + kPg});
  CHECK(f.transport->last_request().body.find(R"("phase":"Running")") != std::string::npos);
  CHECK(f.PhaseInCache() == PodGroupPhase::kRunning);
}

TEST_CASE(
    "ApiStatusWriter: Basalt's CRD keeps /status, and a CRD that gained a status "
    "subresource since is noticed from the answer",
    "[sched][cache][status]") {
  PodGroupFixture f;
  f.transport->AddJson("GET", kDiscovery, 200, kVolcanoResources);
  // The object write is answered with the status unchanged: a status subresource now exists.
  f.transport->AddJson("PATCH", kPg, 200, PodGroupJson("Pending"));
  f.transport->AddJson("GET", kDiscovery, 200, kBasaltResources);
  f.transport->AddJson("PATCH", kPgStatus, 200, PodGroupJson("Running"));
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1, &f.registry);
  REQUIRE(writer.DetectPodGroupStatusSubresource().ok());
  writer.UpdatePodGroupStatus(f.Running());
  writer.Shutdown();
  CHECK(f.Calls() == std::vector<std::string>{
                         std::string("GET ") + kDiscovery, std::string("PATCH ") + kPg,
                         std::string("GET ") + kDiscovery, std::string("PATCH ") + kPgStatus});
  CHECK(writer.podgroup_status_subresource());
  CHECK(MetricValue(f.registry, "basalt_scheduler_podgroup_status_subresource", {}) == 1);
  CHECK(f.PhaseInCache() == PodGroupPhase::kRunning);
}

TEST_CASE(
    "ApiStatusWriter: a write for a deleted PodGroup, and any failed write, is counted by "
    "reason and forgotten",
    "[sched][cache][status]") {
  PodGroupFixture f;
  f.transport->AddJson("PATCH", kPgStatus, 404, kNotFound);
  f.transport->AddJson("GET", kPg, 404, kNotFound);
  f.transport->AddJson("PATCH", "/api/v1/namespaces/ns/pods/p0/status", 403,
                       R"({"kind":"Status","status":"Failure","reason":"Forbidden",)"
                       R"("message":"forbidden","code":403})");
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1, &f.registry);
  writer.UpdatePodGroupStatus(f.Running());
  writer.UpdatePodCondition(
      PodConditionUpdate{"uid-p0", "ns", "p0", PodScheduledCondition{"Unschedulable", "m", ""}});
  writer.Shutdown();
  // Gone: no discovery was needed, and the shape did not change.
  for (const std::string& call : f.Calls()) CHECK(call != std::string("GET ") + kDiscovery);
  CHECK(writer.podgroup_status_subresource());
  CHECK(MetricValue(f.registry, "basalt_scheduler_status_writes_dropped_total",
                    {{"kind", "podgroup"}, {"reason", "deleted"}}) == 1);
  CHECK(MetricValue(f.registry, "basalt_scheduler_status_writes_dropped_total",
                    {{"kind", "pod"}, {"reason", "forbidden"}}) == 1);
  CHECK(f.PhaseInCache() == PodGroupPhase::kPending);  // forgotten: the API's status again
}

TEST_CASE(
    "ApiStatusWriter: a settling PodGroup status is held and the next update of the PodGroup "
    "carries both in one write",
    "[sched][cache][status]") {
  PodGroupFixture f;
  f.transport->AddJson("PATCH", kPgStatus, 200, PodGroupJson("Running"));
  FakeClock clock;
  const Clock::TimePoint t0 = clock.Now();
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1, &f.registry, &clock);
  PodGroupStatusUpdate bound = f.Running();
  bound.status.running = 0;  // placed, its pod bound but not running yet
  bound.settling = true;
  writer.UpdatePodGroupStatus(bound);
  CHECK(f.PhaseInCache() == PodGroupPhase::kRunning);  // recorded at once for the next cycle
  REQUIRE(clock.WaitForTimerBy(t0 + ApiStatusWriter::kSettlingHold));
  CHECK(f.Calls().empty());
  writer.UpdatePodGroupStatus(f.Running());  // running=1: replaces the held one, sent now
  writer.Flush();
  REQUIRE(f.Calls() == std::vector<std::string>{std::string("PATCH ") + kPgStatus});
  CHECK(f.transport->last_request().body.find(R"("running":1)") != std::string::npos);
  CHECK(clock.Now() == t0);
  writer.Shutdown();
  CHECK(writer.writer_stats().held == 1);
  CHECK(writer.writer_stats().coalesced == 1);
}

TEST_CASE("ApiStatusWriter: a settling PodGroup status alone is written after the hold",
          "[sched][cache][status]") {
  PodGroupFixture f;
  std::mutex mu;
  std::condition_variable cv;
  Clock::TimePoint written_at{};
  FakeClock clock;
  f.transport->SetFallback([&](const client::Request&) -> absl::StatusOr<client::Response> {
    std::lock_guard<std::mutex> l(mu);
    written_at = clock.Now();
    cv.notify_all();
    return client::Response{200, {}, PodGroupJson("Running")};
  });
  const Clock::TimePoint t0 = clock.Now();
  ApiStatusWriter writer(f.client.get(), &f.state, nullptr, 1, &f.registry, &clock);
  PodGroupStatusUpdate bound = f.Running();
  bound.status.running = 0;
  bound.settling = true;
  writer.UpdatePodGroupStatus(bound);
  REQUIRE(clock.WaitForTimerBy(t0 + ApiStatusWriter::kSettlingHold));
  CHECK(f.Calls().empty());
  clock.Advance(ApiStatusWriter::kSettlingHold);
  {
    std::unique_lock<std::mutex> l(mu);
    REQUIRE(
        cv.wait_for(l, std::chrono::seconds(10), [&] { return written_at != Clock::TimePoint{}; }));
    CHECK(written_at == t0 + ApiStatusWriter::kSettlingHold);
  }
  writer.Shutdown();
  REQUIRE(f.Calls() == std::vector<std::string>{std::string("PATCH ") + kPgStatus});
  CHECK(f.transport->last_request().body.find(R"("phase":"Running")") != std::string::npos);
}

}  // namespace
}  // namespace basalt::sched::cache

namespace basalt::sched::cache {
namespace {

std::shared_ptr<const CachedPod> RunningPod() {
  auto p = std::make_shared<CachedPod>(*Pod("n1"));
  p->pod.phase = api::PodPhase::kRunning;
  return p;
}

TaskStatus StatusOfP0(ClusterState& state) {
  ClusterState::Snapshot s = state.TakeSnapshot();
  const TaskInfo* p0 = FindP0(s);
  return p0 == nullptr ? TaskStatus::kUnknown : p0->status;
}

TEST_CASE("ApiEvictor: events name the preemptor, DisruptionTarget, then the delete",
          "[sched][cache][evictor]") {
  Fixture f;
  f.state.UpsertPod(RunningPod());
  f.transport->SetFallback([](const client::Request& r) -> absl::StatusOr<client::Response> {
    if (r.verb == "DELETE") return client::Response{200, {}, R"({"kind":"Pod"})"};
    if (r.verb == "PATCH") return client::Response{200, {}, R"({"kind":"Pod"})"};
    return client::Response{201, {}, R"({"kind":"Event"})"};  // events
  });
  ctrlkit::EventRecorder recorder(f.client.get(), {});
  ApiEvictor evictor(f.client.get(), &f.state, &recorder, ApiEvictorOptions{"volcano", nullptr});
  TaskInfo task;
  task.uid = "uid-p0";
  task.namespace_name = "ns";
  task.name = "p0";
  EvictionCause cause;
  cause.reason = "preempt";
  cause.preemptor_job = "team/online";
  cause.preemptor_queue = "default";
  cause.preemptor_priority = 1000000;
  evictor.Evict(task, cause);
  CHECK(StatusOfP0(f.state) == TaskStatus::kReleasing);  // at once, before any request
  evictor.Shutdown();
  recorder.Flush();
  bool event = false, condition = false, deleted = false;
  for (const client::Request& r : f.transport->requests()) {
    if (r.verb == "POST" && r.path.find("/events") != std::string::npos) {
      event = r.body.find(R"("reason":"Evicted")") != std::string::npos &&
              r.body.find("making room for job team/online (queue default, priority 1000000)") !=
                  std::string::npos &&
              r.body.find(R"("type":"Warning")") != std::string::npos;
    }
    if (r.verb == "PATCH" && r.path == "/api/v1/namespaces/ns/pods/p0/status") {
      CHECK_FALSE(deleted);  // the condition comes first
      condition = r.body.find(R"("type":"DisruptionTarget")") != std::string::npos &&
                  r.body.find(R"("reason":"PreemptionByScheduler")") != std::string::npos &&
                  r.body.find("volcano: preempting to accommodate a higher priority pod") !=
                      std::string::npos;
    }
    if (r.verb == "DELETE" && r.path.rfind("/api/v1/namespaces/ns/pods/p0", 0) == 0) {
      deleted = r.body.find("uid-p0") != std::string::npos &&
                r.body.find("gracePeriodSeconds") == std::string::npos;
    }
  }
  CHECK(event);
  CHECK(condition);
  CHECK(deleted);
  CHECK(StatusOfP0(f.state) == TaskStatus::kReleasing);  // until the watch says so
}

TEST_CASE("ApiEvictor: a failed delete puts the victim back", "[sched][cache][evictor]") {
  Fixture f;
  f.state.UpsertPod(RunningPod());
  f.transport->SetFallback([](const client::Request& r) -> absl::StatusOr<client::Response> {
    if (r.verb == "DELETE")
      return client::Response{500, {}, R"({"kind":"Status","message":"boom"})"};
    return client::Response{200, {}, "{}"};
  });
  ApiEvictor evictor(f.client.get(), &f.state, nullptr);
  TaskInfo task;
  task.uid = "uid-p0";
  task.namespace_name = "ns";
  task.name = "p0";
  evictor.Evict(task, EvictionCause{"reclaim", "", "", 0});
  evictor.Shutdown();
  CHECK(f.state.evicting_count() == 0);
  CHECK(StatusOfP0(f.state) == TaskStatus::kRunning);
}

}  // namespace
}  // namespace basalt::sched::cache
