#include "scheduler/actions/allocate/allocate.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;
using testing::RecordingBinder;
using testing::RecordingStatusSink;

struct Cycle {
  RecordingBinder binder;
  RecordingStatusSink sink;
  absl::Status Run(ClusterInfo c, const SchedulerConfig& config = DefaultSchedulerConfig()) {
    PluginRegistry plugins = NewInTreeRegistry();
    ActionRegistry actions = NewInTreeActionRegistry();
    CycleDeps deps{&plugins, &actions, &binder, nullptr, &sink};
    return RunCycle(std::move(c), config, deps, "s1", testing::T(100));
  }
};

MakeNode GpuNode(const std::string& name, int gpus) {
  return MakeNode(name)
      .Allocatable("cpu", "32")
      .Allocatable("memory", "128Gi")
      .Allocatable("nvidia.com/gpu", gpus);
}

// Two 4-GPU nodes with 5 GPUs taken by pods outside any gang: 3 GPUs free.
ClusterInfo ThreeFreeGpus(bool one_more_free = false) {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(GpuNode("n1", 4));
  (void)c.AddNode(GpuNode("n2", 4));
  (void)c.AddTask(MakeTask("other-1")
                      .Request("nvidia.com/gpu", one_more_free ? 2 : 3)
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  (void)c.AddTask(
      MakeTask("other-2").Request("nvidia.com/gpu", 2).Node("n2").Status(TaskStatus::kRunning));
  (void)c.AddJob(MakeJob("ns", "train").MinAvailable(4).MinResources("nvidia.com/gpu", 4));
  for (int i = 0; i < 4; ++i) {
    (void)c.AddTask(
        MakeTask("train-worker-" + std::to_string(i)).Job("ns/train").Request("nvidia.com/gpu", 1));
  }
  return c;
}

TEST_CASE("allocate: a 4-GPU gang with only 3 GPUs free binds nothing and says why",
          "[sched][allocate]") {
  Cycle cycle;
  REQUIRE(cycle.Run(ThreeFreeGpus()).ok());
  CHECK(cycle.binder.calls.empty());

  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/train");
  REQUIRE(pg != nullptr);
  CHECK(pg->status.phase == PodGroupPhase::kInqueue);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->status == "True");
  CHECK(cond->reason == "NotEnoughResources");
  CHECK(cond->message ==
        "1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
        "Pending: 1 Unschedulable, 3 Schedulable. Origin reason is train-worker-3: 0/2 nodes are "
        "unavailable: 2 Insufficient nvidia.com/gpu.");

  std::map<std::string, PodScheduledCondition> pods;
  for (const auto& u : cycle.sink.pods) pods[u.pod_name] = u.condition;
  REQUIRE(pods.size() == 4);
  CHECK(pods["train-worker-0"].reason == "Schedulable");
  CHECK_THAT(pods["train-worker-0"].message, Catch::Contains("once minAvailable is satisfied"));
  CHECK(pods["train-worker-3"].reason == "Unschedulable");
  CHECK(pods["train-worker-3"].message ==
        "0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.");
  bool warned = false;
  for (const auto& e : cycle.sink.events) {
    if (e.kind == "PodGroup" && e.reason == "Unschedulable") {
      warned = true;
      CHECK_THAT(e.message, Catch::Contains("Insufficient nvidia.com/gpu"));
    }
  }
  CHECK(warned);
}

TEST_CASE("allocate: the same gang binds all 4 pods once a 4th GPU is free", "[sched][allocate]") {
  Cycle cycle;
  REQUIRE(cycle.Run(ThreeFreeGpus(/*one_more_free=*/true)).ok());
  REQUIRE(cycle.binder.calls.size() == 1);
  CHECK(cycle.binder.calls[0].job_id == "ns/train");
  CHECK(cycle.binder.calls[0].requests.size() == 4);
  std::map<std::string, int> per_node;
  for (const auto& r : cycle.binder.calls[0].requests) ++per_node[r.node_name];
  CHECK(per_node["n1"] == 2);
  CHECK(per_node["n2"] == 2);
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/train");
  REQUIRE(pg != nullptr);
  const PodGroupCondition* scheduled = pg->status.FindCondition("Scheduled");
  REQUIRE(scheduled != nullptr);
  CHECK(scheduled->reason == "tasks in gang are ready to be scheduled");
}

TEST_CASE("allocate: the fit message aggregates different reasons across nodes",
          "[sched][allocate]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < 4; ++i) {
    (void)c.AddNode(MakeNode("a" + std::to_string(i)).Allocatable("cpu", "8").Label("zone", "a"));
    (void)c.AddNode(GpuNode("b" + std::to_string(i), 4).Label("zone", "b"));
  }
  (void)c.AddJob(MakeJob("ns", "pg"));
  (void)c.AddTask(
      MakeTask("pg-0").Job("ns/pg").Request("nvidia.com/gpu", 1).NodeSelector("zone", "a"));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.binder.calls.empty());
  REQUIRE(cycle.sink.pods.size() == 1);
  CHECK(
      cycle.sink.pods[0].condition.message ==
      "0/8 nodes are unavailable: 4 Insufficient nvidia.com/gpu, 4 node(s) didn't match Pod's node "
      "affinity/selector.");
}

TEST_CASE("allocate: binpack packs 2-GPU tasks onto 4-GPU nodes without holes",
          "[sched][allocate][binpack]") {
  auto config = ParseSchedulerConfig(R"(
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
    arguments:
      binpack.cpu: 0
      binpack.memory: 0
      binpack.resources: nvidia.com/gpu
)");
  REQUIRE(config.ok());
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  for (int i = 1; i <= 3; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i), 4));
  for (int j = 0; j < 4; ++j) {
    cluster.AddJob(
        MakeJob("ns", "job" + std::to_string(j)).Created(j).MinResources("nvidia.com/gpu", 2), 1,
        MakeTask("tmpl").Request("cpu", "1").Request("memory", "1Gi").Request("nvidia.com/gpu", 2));
  }
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(*config).ok());
  std::map<std::string, int64_t> gpus;
  for (int j = 0; j < 4; ++j) {
    for (const auto& p : cluster.job("ns/job" + std::to_string(j)).pods) {
      REQUIRE(p.status == TaskStatus::kRunning);
      gpus[p.node_name] += p.resreq.Get("nvidia.com/gpu");
    }
  }
  REQUIRE(gpus.size() == 2);  // two full nodes, the third left whole
  for (const auto& [node, used] : gpus) CHECK(used == 4000);
}

TEST_CASE("allocate: without an enqueue action, Pending PodGroups are admitted by allocate",
          "[sched][allocate]") {
  auto config = ParseSchedulerConfig(R"(
actions: "allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
)");
  REQUIRE(config.ok());
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(GpuNode("n1", 4));
  (void)c.AddJob(MakeJob("ns", "pg").Phase(PodGroupPhase::kPending));
  (void)c.AddTask(MakeTask("pg-0").Job("ns/pg").Request("nvidia.com/gpu", 1));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c), *config).ok());
  CHECK(cycle.binder.Bound().size() == 1);
}

TEST_CASE("backfill: best-effort pods are placed by backfill", "[sched][backfill]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(GpuNode("n1", 0).Label("zone", "a"));
  (void)c.AddNode(GpuNode("n2", 0).Label("zone", "b"));
  (void)c.AddJob(MakeJob("ns", "be"));
  (void)c.AddTask(MakeTask("be-0").Job("ns/be").NodeSelector("zone", "b"));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  auto bound = cycle.binder.Bound();
  REQUIRE(bound.size() == 1);
  CHECK(bound["uid-be-0"] == "n2");
}

}  // namespace
}  // namespace basalt::sched
