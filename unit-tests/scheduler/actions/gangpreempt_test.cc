#include "scheduler/actions/gangpreempt/gangpreempt.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/conf.h"
#include "unit-tests/scheduler/testing/cycle.h"
#include "unit-tests/scheduler/testing/fakes.h"
#include "unit-tests/scheduler/testing/hypernodes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

// The built-in default plus gangpreempt, with `arguments` for it.
SchedulerConfig GangPreemptConfig(std::map<std::string, std::string, std::less<>> arguments = {}) {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("gangpreempt");
  if (!arguments.empty()) {
    config.configurations.push_back({"gangpreempt", Arguments(std::move(arguments))});
  }
  return config;
}

MakeTask GpuPod(int32_t priority = 100) {
  return MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(priority);
}

void AddGpuNodes(FakeCluster& cluster, int nodes, int gpus) {
  for (int n = 0; n < nodes; ++n) {
    cluster.AddNode(MakeNode(fmt::format("n{:03}", n))
                        .Allocatable("cpu", "64")
                        .Allocatable("nvidia.com/gpu", gpus));
  }
}

// A rigid offline gang: `pods` x 1 GPU, minAvailable = pods.
void AddGang(FakeCluster& cluster, const std::string& name, int pods, int32_t priority = 100,
             int created = 1, std::string queue = "default") {
  cluster.AddJob(MakeJob("ns", name)
                     .Queue(std::move(queue))
                     .Priority(priority)
                     .MinAvailable(pods)
                     .Created(created),
                 pods, GpuPod(priority));
}

void AddOnline(FakeCluster& cluster, int pods, MakeTask pod = GpuPod(1000000)) {
  cluster.AddJob(MakeJob("ns", "online").Priority(1000000).MinAvailable(pods).Created(9), pods,
                 std::move(pod));
}

void Run(FakeCluster& cluster, const SchedulerConfig& config, int cycles) {
  for (int i = 0; i < cycles; ++i) REQUIRE(cluster.RunCycle(config).ok());
}

std::set<std::string> EvictedJobs(const FakeCluster& cluster) {
  std::set<std::string> jobs;
  for (const std::string& uid : cluster.evicted_uids()) jobs.insert(uid.substr(0, uid.rfind('/')));
  return jobs;
}

TEST_CASE("gangpreempt: an online gang evicts one whole offline gang where preempt evicts none",
          "[sched][gangpreempt]") {
  for (const std::string action : {"preempt", "gangpreempt"}) {
    SchedulerConfig config = DefaultSchedulerConfig();
    config.actions.push_back(action);
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    AddGpuNodes(cluster, 2, 4);
    AddGang(cluster, "off-a", 4);
    AddGang(cluster, "off-b", 4);
    Run(cluster, config, 3);
    REQUIRE(cluster.RunningPods("ns/off-a") + cluster.RunningPods("ns/off-b") == 8);
    AddOnline(cluster, 4);
    Run(cluster, config, 4);
    if (action == "preempt") {
      // preempt never breaks a victim gang below minAvailable: the online job waits.
      CHECK(cluster.evictions() == 0);
      CHECK(cluster.RunningPods("ns/online") == 0);
      continue;
    }
    CHECK(cluster.RunningPods("ns/online") == 4);
    CHECK(cluster.evictions() == 4);  // one whole gang, the minimum
    CHECK(EvictedJobs(cluster).size() == 1);
    CHECK(cluster.RunningPods("ns/off-a") + cluster.RunningPods("ns/off-b") == 4);
  }
}

TEST_CASE("gangpreempt: evictions name the preemptor and its pods are nominated",
          "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  AddGpuNodes(cluster, 1, 4);
  AddGang(cluster, "off-a", 4);
  Run(cluster, config, 3);
  AddOnline(cluster, 2);
  Run(cluster, config, 1);  // pods created
  REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.last_evictions().size() == 4);
  for (const EvictionCause& c : cluster.last_evictions()) {
    CHECK(c.reason == "gangpreempt");
    CHECK(c.preemptor_job == "ns/online");
    CHECK(c.Message() ==
          "gangpreempt: making room for job ns/online (queue default, priority 1000000)");
  }
  int nominated = 0;
  for (const auto& u : cluster.last_sink().pods) {
    nominated +=
        u.task_uid.rfind("ns/online/", 0) == 0 && u.condition.nominated_node_name == "n000";
  }
  CHECK(nominated == 2);
  Run(cluster, config, 2);
  CHECK(cluster.RunningPods("ns/online") == 2);
}

TEST_CASE("gangpreempt: room still being freed by earlier victims is used, no second gang goes",
          "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  AddGpuNodes(cluster, 1, 8);
  AddGang(cluster, "off-a", 4);
  AddGang(cluster, "off-b", 4);
  Run(cluster, config, 3);
  REQUIRE(cluster.RunningPods("ns/off-a") + cluster.RunningPods("ns/off-b") == 8);
  // off-a's pods are terminating (evicted in an earlier cycle, their deletion not yet seen).
  cluster.SetPodsStatus("ns/off-a", TaskStatus::kReleasing);
  AddOnline(cluster, 4);
  Run(cluster, config, 4);
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningPods("ns/off-b") == 4);
}

TEST_CASE("gangpreempt: an elastic job's spare pods go before a whole gang",
          "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  AddGpuNodes(cluster, 3, 4);
  AddGang(cluster, "rigid", 4);
  // Elastic: 8 pods, minAvailable 2, so 6 can go without breaking it.
  cluster.AddJob(MakeJob("ns", "elastic").Priority(100).MinAvailable(2).Created(1), 8, GpuPod());
  Run(cluster, config, 3);
  REQUIRE(cluster.RunningPods("ns/rigid") + cluster.RunningPods("ns/elastic") == 12);
  AddOnline(cluster, 4);
  Run(cluster, config, 4);
  CHECK(cluster.RunningPods("ns/online") == 4);
  CHECK(cluster.evictions() == 4);
  CHECK(EvictedJobs(cluster) == std::set<std::string>{"ns/elastic"});
  CHECK(cluster.RunningPods("ns/rigid") == 4);
}

TEST_CASE("gangpreempt: victimOrderPolicy priority-first takes the lowest-priority gang first",
          "[sched][gangpreempt]") {
  for (const std::string policy : {"safe-first", "priority-first"}) {
    const SchedulerConfig config = GangPreemptConfig({{"victimOrderPolicy", policy}});
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    AddGpuNodes(cluster, 3, 4);
    AddGang(cluster, "rigid", 4, /*priority=*/10);
    cluster.AddJob(MakeJob("ns", "elastic").Priority(50).MinAvailable(2).Created(1), 8, GpuPod(50));
    Run(cluster, config, 3);
    REQUIRE(cluster.RunningPods("ns/rigid") + cluster.RunningPods("ns/elastic") == 12);
    AddOnline(cluster, 4);
    Run(cluster, config, 4);
    CHECK(cluster.RunningPods("ns/online") == 4);
    CHECK(cluster.evictions() == 4);
    CHECK(EvictedJobs(cluster) ==
          std::set<std::string>{policy == "safe-first" ? "ns/elastic" : "ns/rigid"});
  }
}

TEST_CASE("gangpreempt: allowWholeBundle false spares whole gangs", "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig({{"allowWholeBundle", "false"}});
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  AddGpuNodes(cluster, 2, 4);
  AddGang(cluster, "off-a", 4);
  AddGang(cluster, "off-b", 4);
  Run(cluster, config, 3);
  AddOnline(cluster, 4);
  Run(cluster, config, 4);
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningPods("ns/online") == 0);
}

TEST_CASE("gangpreempt: nothing is evicted when even every victim cannot make room",
          "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  AddGpuNodes(cluster, 2, 2);
  AddGang(cluster, "off-a", 2);
  cluster.AddJob(MakeJob("ns", "pinned").Priority(100).MinAvailable(2).Created(1), 2,
                 GpuPod().Preemptable(false));
  Run(cluster, config, 3);
  REQUIRE(cluster.RunningPods("ns/off-a") + cluster.RunningPods("ns/pinned") == 4);
  AddOnline(cluster, 3);  // 3 GPUs; only 2 can be freed
  Run(cluster, config, 4);
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningPods("ns/off-a") == 2);
}

TEST_CASE("gangpreempt: never equal or higher priority, other queues, critical pods or Never",
          "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig();
  SECTION("equal priority") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    AddGpuNodes(cluster, 1, 4);
    AddGang(cluster, "peer", 4, /*priority=*/1000000);
    Run(cluster, config, 3);
    AddOnline(cluster, 4);
    Run(cluster, config, 4);
    CHECK(cluster.evictions() == 0);
  }
  SECTION("another queue") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    cluster.AddQueue(MakeQueue("other"));
    AddGpuNodes(cluster, 1, 4);
    AddGang(cluster, "off-a", 4, 100, 1, "other");
    Run(cluster, config, 3);
    AddOnline(cluster, 4);
    Run(cluster, config, 4);
    CHECK(cluster.evictions() == 0);
  }
  SECTION("kube-system and system-node-critical pods") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    AddGpuNodes(cluster, 1, 4);
    cluster.AddJob(MakeJob("kube-system", "sys").Priority(100).MinAvailable(2).Created(1), 2,
                   GpuPod());
    cluster.AddJob(MakeJob("ns", "crit").Priority(100).MinAvailable(2).Created(1), 2,
                   GpuPod().PriorityClass("system-node-critical"));
    Run(cluster, config, 3);
    REQUIRE(cluster.RunningPods("kube-system/sys") + cluster.RunningPods("ns/crit") == 4);
    AddOnline(cluster, 2);
    Run(cluster, config, 4);
    CHECK(cluster.evictions() == 0);
  }
  SECTION("preemptionPolicy Never") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    AddGpuNodes(cluster, 1, 4);
    AddGang(cluster, "off-a", 4);
    Run(cluster, config, 3);
    AddOnline(cluster, 2, GpuPod(1000000).PreemptNever());
    Run(cluster, config, 4);
    CHECK(cluster.evictions() == 0);
  }
  SECTION("a PodGroup that is not preemptable") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    AddGpuNodes(cluster, 1, 4);
    cluster.AddJob(MakeJob("ns", "off-a").Priority(100).MinAvailable(4).Created(1).NotPreemptable(),
                   4, GpuPod());
    Run(cluster, config, 3);
    AddOnline(cluster, 2);
    Run(cluster, config, 4);
    CHECK(cluster.evictions() == 0);
  }
}

TEST_CASE("gangpreempt: on 100 nodes of 8-GPU gangs, an online job takes the fewest whole gangs",
          "[sched][gangpreempt]") {
  const SchedulerConfig config = GangPreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  AddGpuNodes(cluster, 100, 8);
  for (int j = 0; j < 100; ++j) AddGang(cluster, fmt::format("off-{:03}", j), 8);
  Run(cluster, config, 3);
  int offline = 0;
  for (int j = 0; j < 100; ++j) offline += cluster.RunningPods(fmt::format("ns/off-{:03}", j));
  REQUIRE(offline == 800);
  // 16 x 1 GPU: two gangs of 8 are the minimum.
  AddOnline(cluster, 16);
  Run(cluster, config, 4);
  CHECK(cluster.RunningPods("ns/online") == 16);
  CHECK(cluster.evictions() == 16);
  CHECK(EvictedJobs(cluster).size() == 2);
  std::set<std::string> unique(cluster.evicted_uids().begin(), cluster.evicted_uids().end());
  CHECK(unique.size() == 16);  // no pod evicted twice
}

TEST_CASE("gangpreempt: bad arguments refuse the configuration naming the key",
          "[sched][gangpreempt]") {
  const auto actions = NewInTreeActionRegistry().Names();
  const auto plugins = NewInTreeRegistry().Names();
  SchedulerConfig config = GangPreemptConfig({{"victimOrderPolicy", "newest-first"}});
  absl::Status s = ValidateSchedulerConfig(config, actions, plugins);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()) ==
        "configurations: gangpreempt: victimOrderPolicy must be safe-first or priority-first, "
        "got \"newest-first\"");
  config = GangPreemptConfig({{"maxDomains", "many"}});
  s = ValidateSchedulerConfig(config, actions, plugins);
  CHECK(std::string(s.message()) ==
        "configurations: gangpreempt: argument maxDomains: value \"many\" is not an integer");
  config = GangPreemptConfig({{"allowWholeBundle", "perhaps"}});
  CHECK(!ValidateSchedulerConfig(config, actions, plugins).ok());
  // As in Volcano, maxDomains <= 0 means the default.
  config = GangPreemptConfig({{"maxDomains", "0"}, {"allowWholeBundle", "true"}});
  CHECK(ValidateSchedulerConfig(config, actions, plugins).ok());
}

// ---- Partitions (spec.subGroupPolicy with a hard networkTopology per sub-group) ----

namespace partitions {

const std::string kConfig = testing::SchedConfYaml("enqueue, allocate, gangpreempt",
                                                   testing::PluginEntry("network-topology-aware"));

std::string SwitchOf(const std::string& node) { return node < "n4" ? "s0" : "s1"; }

// Two switches of four 2-GPU nodes (s0: n0..n3, s1: n4..n7) under spine s2, every GPU taken by
// a Running low-priority job of 16 one-GPU pods, two per node (minAvailable 1: its pods beyond
// the first are a safe bundle).
ClusterInfo FullSwitches() {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < 8; ++i) {
    (void)c.AddNode(MakeNode(fmt::format("n{}", i))
                        .Allocatable("cpu", "32")
                        .Allocatable("memory", "128Gi")
                        .Allocatable("nvidia.com/gpu", 2));
  }
  (void)c.AddJob(MakeJob("ns", "low").MinAvailable(1).Priority(1).Phase(PodGroupPhase::kRunning));
  for (int i = 0; i < 16; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("low-{:02}", i))
                        .Job("ns/low")
                        .Priority(1)
                        .Request("cpu", "1")
                        .Request("nvidia.com/gpu", 1)
                        .Node(fmt::format("n{}", i / 2))
                        .Status(TaskStatus::kRunning));
  }
  c.set_hypernodes(
      testing::SwitchesUnderSpine({{"n0", "n1", "n2", "n3"}, {"n4", "n5", "n6", "n7"}}));
  return c;
}

// A high-priority job of `partitions` partitions of `size` pods x `gpus` GPUs, each partition
// hard tier 1 (subGroupPolicy w, matchLabelKeys volcano.sh/partition-id), admitted (Inqueue).
void AddPartitioned(ClusterInfo& c, int partitions, int size, int gpus) {
  JobInfo job = MakeJob("ns", "high")
                    .MinAvailable(partitions * size)
                    .Priority(1000)
                    .Phase(PodGroupPhase::kInqueue)
                    .Build();
  SubGroupPolicy policy;
  policy.name = "w";
  policy.sub_group_size = size;
  policy.selector = LabelSelector{{{"volcano.sh/task-spec", "w"}}, {}};
  policy.match_label_keys = {"volcano.sh/partition-id"};
  policy.network_topology =
      NetworkTopologyConstraint{.hard = true, .highest_tier = 1, .highest_tier_name = ""};
  job.sub_group_policies.push_back(std::move(policy));
  (void)c.AddJob(std::move(job));
  for (int p = 0; p < partitions; ++p) {
    for (int i = 0; i < size; ++i) {
      (void)c.AddTask(MakeTask(fmt::format("high-p{}-{}", p, i))
                          .Job("ns/high")
                          .Priority(1000)
                          .Label("volcano.sh/task-spec", "w")
                          .Label("volcano.sh/partition-id", std::to_string(p))
                          .Request("cpu", "1")
                          .Request("nvidia.com/gpu", gpus));
    }
  }
}

struct Cycle : testing::OneCycle {
  Cycle() : OneCycle(kConfig) {}
  std::map<std::string, std::string> node_of;  // low pod uid -> node, before the cycle

  absl::Status Run(ClusterInfo c) {
    for (const auto& [id, job] : c.jobs()) {
      for (const auto& [uid, t] : job.tasks()) node_of[uid] = t.node_name;
    }
    return OneCycle::Run(std::move(c));
  }
  // Switch -> evicted pods there.
  std::map<std::string, int> EvictedPerSwitch() const {
    std::map<std::string, int> out;
    for (const auto& [uid, reason] : evictor.evicted) ++out[SwitchOf(node_of.at(uid))];
    return out;
  }
  // Partition -> the switches its pods were nominated on.
  std::map<int, std::set<std::string>> NominatedSwitches() const {
    std::map<int, std::set<std::string>> out;
    for (const auto& u : sink.pods) {
      if (u.condition.nominated_node_name.empty()) continue;
      const std::string& uid = u.task_uid;
      const size_t at = uid.find("high-p");
      if (at == std::string::npos) continue;
      out[uid[at + 6] - '0'].insert(SwitchOf(u.condition.nominated_node_name));
    }
    return out;
  }
};

}  // namespace partitions

TEST_CASE("gangpreempt: two partitions of a whole switch each free both switches",
          "[sched][gangpreempt][partitions]") {
  ClusterInfo c = partitions::FullSwitches();
  partitions::AddPartitioned(c, 2, 4, 2);  // each partition 8 GPUs: exactly one switch
  partitions::Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.evictor.evicted.size() == 16);
  CHECK(cycle.EvictedPerSwitch() == std::map<std::string, int>{{"s0", 8}, {"s1", 8}});
  const auto nominated = cycle.NominatedSwitches();
  REQUIRE(nominated.size() == 2);
  REQUIRE(nominated.at(0).size() == 1);
  REQUIRE(nominated.at(1).size() == 1);
  CHECK(*nominated.at(0).begin() != *nominated.at(1).begin());
}

TEST_CASE("gangpreempt: a partition's victims are freed inside one switch, not scattered",
          "[sched][gangpreempt][partitions]") {
  ClusterInfo c = partitions::FullSwitches();
  partitions::AddPartitioned(c, 1, 4, 1);  // 4 GPUs, must share one switch
  partitions::Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.evictor.evicted.size() == 4);
  const auto per_switch = cycle.EvictedPerSwitch();
  CHECK(per_switch.size() == 1);
  const auto nominated = cycle.NominatedSwitches();
  REQUIRE(nominated.size() == 1);
  REQUIRE(nominated.at(0).size() == 1);
  CHECK(per_switch.count(*nominated.at(0).begin()) == 1);
}

TEST_CASE("gangpreempt: nothing is evicted for a partition no switch can hold, and it says why",
          "[sched][gangpreempt][partitions]") {
  ClusterInfo c = partitions::FullSwitches();
  partitions::AddPartitioned(c, 2, 5, 2);  // 10 GPUs per partition, a switch has 8
  partitions::Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.evictor.evicted.empty());
  CHECK(cycle.binder.calls.empty());
  CHECK_THAT(cycle.Unschedulable("ns/high"),
             Catch::Contains("gangpreempt: sub-group w-0: no domain it allows could hold it even "
                             "with victims evicted: hard tier 1: no HyperNode of tier ≤ 1 has 10 "
                             "allocatable nvidia.com/gpu; best s0 has 8"));
}

TEST_CASE("gangpreempt: a gang with a job-level hard tier 1 frees one switch in a full cluster",
          "[sched][gangpreempt][partitions]") {
  // The domains are judged on what they could hold once victims go: in a full cluster no
  // switch has free GPUs, yet one switch is freed for the gang.
  ClusterInfo c = partitions::FullSwitches();
  JobInfo job = MakeJob("ns", "high").MinAvailable(4).Priority(1000).Phase(PodGroupPhase::kInqueue);
  job.network_topology =
      NetworkTopologyConstraint{.hard = true, .highest_tier = 1, .highest_tier_name = ""};
  (void)c.AddJob(std::move(job));
  for (int i = 0; i < 4; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("high-p0-{}", i))
                        .Job("ns/high")
                        .Priority(1000)
                        .Request("cpu", "1")
                        .Request("nvidia.com/gpu", 2));
  }
  partitions::Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.evictor.evicted.size() == 8);
  CHECK(cycle.EvictedPerSwitch().size() == 1);
  const auto nominated = cycle.NominatedSwitches();
  REQUIRE(nominated.size() == 1);
  CHECK(nominated.at(0).size() == 1);
}

}  // namespace
}  // namespace basalt::sched
