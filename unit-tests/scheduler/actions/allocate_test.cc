#include "scheduler/actions/allocate/allocate.h"

#include <catch2/catch.hpp>
#include <set>

#include "fmt/format.h"
#include "unit-tests/scheduler/testing/conf.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::kHostname;
using testing::kZone;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;
using testing::MakeTerm;
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

// A vcjob's gang while its controller creates the pods: `created` of its 4 pods exist, the
// PodGroup (Inqueue) has the status `written` by the cycle before.
ClusterInfo GangBeingCreated(int created, const PodGroupStatus* written) {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(GpuNode("n1", 4));
  (void)c.AddJob(MakeJob("ns", "train")
                     .MinAvailable(4)
                     .MinTaskMember("worker", 4)
                     .Phase(PodGroupPhase::kInqueue));
  if (written != nullptr) c.FindJob("ns/train")->podgroup_status = *written;
  for (int i = 0; i < created; ++i) {
    (void)c.AddTask(MakeTask("train-worker-" + std::to_string(i))
                        .Job("ns/train")
                        .Role("worker")
                        .Request("nvidia.com/gpu", 1));
  }
  return c;
}

TEST_CASE(
    "allocate: a gang whose pods are still being created is explained once on its PodGroup, "
    "never on each pod",
    "[sched][allocate]") {
  Cycle first;
  REQUIRE(first.Run(GangBeingCreated(1, nullptr)).ok());
  CHECK(first.binder.calls.empty());
  CHECK(first.sink.pods.empty());    // no PodScheduled=False on the pod that exists
  CHECK(first.sink.events.empty());  // no FailedScheduling, no PodGroup Unschedulable
  REQUIRE(first.sink.podgroups.size() == 1);
  const PodGroupStatus written = first.sink.podgroups[0].status;
  CHECK(written.phase == PodGroupPhase::kInqueue);
  const PodGroupCondition* cond = written.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->status == "True");
  CHECK(cond->reason == "NotEnoughPodsOfTask");
  CHECK(cond->message == "Waiting for the pods of task worker to be created: minTaskMember 4");

  // More pods arrive, still short of the gang: nothing is written again.
  for (int created : {2, 3}) {
    Cycle next;
    REQUIRE(next.Run(GangBeingCreated(created, &written)).ok());
    CHECK(next.sink.podgroups.empty());
    CHECK(next.sink.pods.empty());
    CHECK(next.sink.events.empty());
  }

  // The last pod: the gang is placed, its Unschedulable condition turns False, one event.
  Cycle last;
  REQUIRE(last.Run(GangBeingCreated(4, &written)).ok());
  REQUIRE(last.binder.calls.size() == 1);
  CHECK(last.binder.calls[0].requests.size() == 4);
  CHECK(last.sink.pods.empty());
  const PodGroupStatusUpdate* pg = last.sink.LastPodGroup("ns/train");
  REQUIRE(pg != nullptr);
  CHECK(pg->status.phase == PodGroupPhase::kRunning);
  const PodGroupCondition* after = pg->status.FindCondition("Unschedulable");
  REQUIRE(after != nullptr);
  CHECK(after->status == "False");
  REQUIRE(last.sink.events.size() == 1);
  CHECK(last.sink.events[0].reason == "Scheduled");
}

TEST_CASE("allocate: a gang with all its pods that cannot fit still explains each pod once",
          "[sched][allocate]") {
  Cycle first;
  ClusterInfo c = GangBeingCreated(4, nullptr);
  (void)c.AddTask(
      MakeTask("train-worker-4").Job("ns/train").Role("worker").Request("nvidia.com/gpu", 1));
  c.FindJob("ns/train")->min_available = 5;
  c.FindJob("ns/train")->task_min_available["worker"] = 5;
  REQUIRE(first.Run(std::move(c)).ok());
  CHECK(first.binder.calls.empty());
  CHECK(first.sink.pods.size() == 5);  // 4 Schedulable (wait for the 5th), 1 Unschedulable
  int failed_scheduling = 0;
  for (const auto& e : first.sink.events) failed_scheduling += e.reason == "FailedScheduling";
  CHECK(failed_scheduling == 5);
  const PodGroupStatusUpdate* pg = first.sink.LastPodGroup("ns/train");
  REQUIRE(pg != nullptr);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->reason == "NotEnoughResources");
  CHECK_THAT(cond->message, Catch::StartsWith("1/5 tasks in gang unschedulable"));
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
  const SchedulerConfig config = testing::SchedConf(
      "enqueue, allocate, backfill",
      "  - name: binpack\n    arguments:\n      binpack.cpu: 0\n      binpack.memory: 0\n"
      "      binpack.resources: nvidia.com/gpu\n");
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  for (int i = 1; i <= 3; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i), 4));
  for (int j = 0; j < 4; ++j) {
    cluster.AddJob(
        MakeJob("ns", "job" + std::to_string(j)).Created(j).MinResources("nvidia.com/gpu", 2), 1,
        MakeTask("tmpl").Request("cpu", "1").Request("memory", "1Gi").Request("nvidia.com/gpu", 2));
  }
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
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

// `n` 8-GPU nodes n1..n<n> with hostname labels; n1, n2 in zone a, the others in zone b.
ClusterInfo HostnameNodes(int n) {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 1; i <= n; ++i) {
    const std::string name = fmt::format("n{}", i);
    (void)c.AddNode(GpuNode(name, 8).Label(kHostname, name).Label(kZone, i <= 2 ? "a" : "b"));
  }
  return c;
}

void AddSpreadGang(ClusterInfo& c, const std::string& name, int size) {
  (void)c.AddJob(MakeJob("ns", name).MinAvailable(size));
  for (int i = 0; i < size; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("{}-{}", name, i))
                        .Job(fmt::format("ns/{}", name))
                        .Request("nvidia.com/gpu", 1)
                        .Label("app", name)
                        .PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", name)));
  }
}

TEST_CASE("allocate: a gang with hostname anti-affinity spreads over distinct nodes in one cycle",
          "[sched][allocate][podaffinity]") {
  ClusterInfo c = HostnameNodes(5);
  AddSpreadGang(c, "spread", 4);
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  auto bound = cycle.binder.Bound();
  REQUIRE(bound.size() == 4);
  std::set<std::string> nodes;
  for (const auto& [uid, node] : bound) nodes.insert(node);
  CHECK(nodes.size() == 4);
  CHECK(cycle.binder.calls.size() == 1);  // one gang commit
}

TEST_CASE("allocate: a hostname anti-affinity gang larger than the cluster binds nothing",
          "[sched][allocate][podaffinity]") {
  ClusterInfo c = HostnameNodes(3);
  AddSpreadGang(c, "spread", 4);
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.binder.calls.empty());
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/spread");
  REQUIRE(pg != nullptr);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message,
             Catch::Contains("0/3 nodes are unavailable: 3 node(s) didn't match pod anti-affinity "
                             "rules."));
}

TEST_CASE("allocate: required affinity follows a pod placed earlier in the same cycle",
          "[sched][allocate][podaffinity]") {
  ClusterInfo c = HostnameNodes(4);
  // The database is created first, so it is placed first; binpack-free default config spreads
  // by least-requested, so without affinity the web pod would not follow it.
  (void)c.AddJob(MakeJob("ns", "db").MinAvailable(1).Created(1));
  (void)c.AddTask(MakeTask("db-0").Job("ns/db").Request("nvidia.com/gpu", 4).Label("app", "db"));
  (void)c.AddJob(MakeJob("ns", "web").MinAvailable(2).Created(2));
  for (int i = 0; i < 2; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("web-{}", i))
                        .Job("ns/web")
                        .Request("nvidia.com/gpu", 1)
                        .PodAffinity(MakeTerm(kHostname).MatchLabel("app", "db")));
  }
  // A cache pod must share the database's zone but not its host.
  (void)c.AddJob(MakeJob("ns", "cache").MinAvailable(1).Created(3));
  (void)c.AddTask(MakeTask("cache-0")
                      .Job("ns/cache")
                      .Request("nvidia.com/gpu", 1)
                      .PodAffinity(MakeTerm(kZone).MatchLabel("app", "db"))
                      .PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "db")));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  auto bound = cycle.binder.Bound();
  REQUIRE(bound.size() == 4);
  const std::string db = bound["uid-db-0"];
  CHECK(bound["uid-web-0"] == db);
  CHECK(bound["uid-web-1"] == db);
  const std::string cache = bound["uid-cache-0"];
  CHECK(cache != db);
  const bool same_zone = (db == "n1" || db == "n2") == (cache == "n1" || cache == "n2");
  CHECK(same_zone);
}

TEST_CASE("allocate: preferred pod affinity (nodeorder podaffinity.weight) pulls a pod to its peer",
          "[sched][allocate][podaffinity]") {
  ClusterInfo c = HostnameNodes(4);
  // The database takes half of its node's CPU, so least-requested scoring alone steers other
  // pods away from it.
  (void)c.AddJob(MakeJob("ns", "db").MinAvailable(1).Created(1));
  (void)c.AddTask(MakeTask("db-0").Job("ns/db").Request("cpu", "16").Label("app", "db"));
  (void)c.AddJob(MakeJob("ns", "plain").MinAvailable(1).Created(2));
  (void)c.AddTask(MakeTask("plain-0").Job("ns/plain").Request("cpu", "1"));
  (void)c.AddJob(MakeJob("ns", "near").MinAvailable(1).Created(3));
  (void)c.AddTask(MakeTask("near-0")
                      .Job("ns/near")
                      .Request("cpu", "1")
                      .PreferredPodAffinity(50, MakeTerm(kHostname).MatchLabel("app", "db")));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  auto bound = cycle.binder.Bound();
  REQUIRE(bound.size() == 3);
  CHECK(bound["uid-plain-0"] != bound["uid-db-0"]);
  CHECK(bound["uid-near-0"] == bound["uid-db-0"]);
}

TEST_CASE("allocate: a pod whose host port is taken everywhere stays pending with the reason",
          "[sched][allocate]") {
  ClusterInfo c = HostnameNodes(2);
  for (int i = 1; i <= 2; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("daemon-{}", i))
                        .Request("cpu", "1")
                        .Node(fmt::format("n{}", i))
                        .Status(TaskStatus::kRunning)
                        .HostPort(9100));
  }
  (void)c.AddJob(MakeJob("ns", "exporter").MinAvailable(1));
  (void)c.AddTask(MakeTask("exporter-0").Job("ns/exporter").Request("cpu", "1").HostPort(9100));
  (void)c.AddJob(MakeJob("ns", "other").MinAvailable(1));
  (void)c.AddTask(MakeTask("other-0").Job("ns/other").Request("cpu", "1").HostPort(9101));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  auto bound = cycle.binder.Bound();
  CHECK(bound.count("uid-exporter-0") == 0);
  CHECK(bound.count("uid-other-0") == 1);
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/exporter");
  REQUIRE(pg != nullptr);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message, Catch::Contains("0/2 nodes are unavailable: 2 node(s) didn't have "
                                            "free ports for the requested pod ports."));
}

TEST_CASE(
    "allocate: a pod requesting 2^63-1 cpu and GPUs stays Pending with an explanation "
    "while the other jobs of its queue run",
    "[sched][allocate][feasibility]") {
  // As the podgroup controller makes it for a bare pod: the pod exists, its PodGroup is Pending
  // with minMember 1 and minResources equal to the pod's request.
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(GpuNode("n1", 4));
  (void)c.AddNode(GpuNode("n2", 4));
  (void)c.AddJob(MakeJob("ns", "huge")
                     .MinResources("cpu", "9223372036854775807m")
                     .MinResources("nvidia.com/gpu", "9223372036854775807m")
                     .Phase(PodGroupPhase::kPending)
                     .Created(0));
  (void)c.AddTask(MakeTask("huge")
                      .Job("ns/huge")
                      .Request("cpu", "9223372036854775807m")
                      .Request("nvidia.com/gpu", "9223372036854775807m"));
  for (int j = 1; j <= 2; ++j) {
    const std::string name = "small" + std::to_string(j);
    (void)c.AddJob(MakeJob("ns", name)
                       .MinResources("cpu", "1")
                       .MinResources("nvidia.com/gpu", 1)
                       .Phase(PodGroupPhase::kPending)
                       .Created(j));
    (void)c.AddTask(
        MakeTask(name).Job("ns/" + name).Request("cpu", "1").Request("nvidia.com/gpu", 1));
  }
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());

  std::map<std::string, std::string> bound = cycle.binder.Bound();
  CHECK(bound.count("uid-small1") == 1);
  CHECK(bound.count("uid-small2") == 1);
  CHECK(bound.count("uid-huge") == 0);

  const std::string expected =
      "pod ns/huge can never be scheduled: it requests cpu 9223372036854775807m or more, more "
      "than the largest allocatable of any node (32)";
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/huge");
  REQUIRE(pg != nullptr);
  CHECK(pg->status.phase == PodGroupPhase::kPending);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message, Catch::Contains(expected));
  bool pod_told = false;
  for (const auto& u : cycle.sink.pods) {
    if (u.pod_name == "huge") {
      pod_told = true;
      CHECK(u.condition.reason == "Unschedulable");
      CHECK(u.condition.message == expected);
    }
  }
  CHECK(pod_told);
  bool event = false;
  for (const auto& e : cycle.sink.events) {
    if (e.kind == "PodGroup" && e.name == "huge" && e.reason == "Unschedulable") {
      event = true;
      CHECK_THAT(e.message, Catch::Contains(expected));
    }
  }
  CHECK(event);
}

}  // namespace
}  // namespace basalt::sched
