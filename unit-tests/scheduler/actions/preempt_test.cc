#include "scheduler/actions/preempt/preempt.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "fmt/format.h"
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

// The Helm chart's configuration: gang and drf leave preemption to priority (and the action's
// own gang safety).
SchedulerConfig PreemptConfig() {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("preempt");
  for (auto& tier : config.tiers) {
    for (auto& p : tier.plugins) {
      if (p.name == "gang" || p.name == "drf") p.flags["enablePreemptable"] = false;
    }
  }
  return config;
}

// Fills `gpus` one-GPU slots of `node_count` nodes with a low-priority elastic job "ns/low"
// (minAvailable 1) built from `pod`, and runs cycles until it runs everywhere.
void FillWithLow(FakeCluster& cluster, const SchedulerConfig& config, int node_count,
                 int gpus_per_node, MakeTask pod, MakeJob job = MakeJob("ns", "low")) {
  for (int n = 0; n < node_count; ++n) {
    cluster.AddNode(MakeNode(fmt::format("n{}", n))
                        .Allocatable("cpu", "32")
                        .Allocatable("nvidia.com/gpu", gpus_per_node));
  }
  cluster.AddJob(job.Priority(1).MinAvailable(1).Created(1), node_count * gpus_per_node,
                 pod.Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
}

void AddHigh(FakeCluster& cluster, int pods, int min_available, MakeTask pod = MakeTask("tmpl"),
             std::string queue = "default") {
  cluster.AddJob(MakeJob("ns", "high")
                     .Queue(std::move(queue))
                     .Priority(1000000)
                     .MinAvailable(min_available)
                     .Created(5),
                 pods, pod.Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(1000000));
}

TEST_CASE("preempt: a high-priority gang evicts just enough pods of a lower-priority elastic job",
          "[sched][preempt]") {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("preempt");
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  // Elastic low-priority job: 4 pods, minAvailable 1, so up to 3 may be preempted.
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(1).Created(1), 4,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningInQueue("default", "nvidia.com/gpu") == 4000);

  // Already admitted high-priority gang of 2 x 1 GPU.
  cluster.AddJob(MakeJob("ns", "high").Priority(10).MinAvailable(2).Created(2), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(10));
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(config).ok());
  int high_running = 0;
  for (const auto& p : cluster.job("ns/high").pods)
    high_running += p.status == TaskStatus::kRunning;
  CHECK(high_running == 2);
  CHECK(cluster.evictions() == 2);
  int low_running = 0;
  for (const auto& p : cluster.job("ns/low").pods) low_running += p.status == TaskStatus::kRunning;
  CHECK(low_running == 2);
}

TEST_CASE("preempt: gang safety holds with gang's Preemptable off (the Helm configuration)",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 2));
  cluster.AddNode(MakeNode("n2").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 2));
  // A gang of 4 over both nodes: no node holds all of it, and each pod is needed.
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(4).Created(1), 4,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/low") == 4);
  AddHigh(cluster, 1, 1);
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningPods("ns/low") == 4);
}

TEST_CASE("preempt: a victim gang is never broken below its minAvailable", "[sched][preempt]") {
  // As in Volcano, an empty victim set in tier 1 (gang refuses) passes the decision to tier 2,
  // where drf alone would allow the victim; the Helm default therefore turns drf's
  // enablePreemptable off, and so does this test.
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("preempt");
  for (auto& p : config.tiers[1].plugins) {
    if (p.name == "drf") p.flags["enablePreemptable"] = false;
  }
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(4).Created(1), 4,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  cluster.AddJob(MakeJob("ns", "high").Priority(10).MinAvailable(1).Created(2), 1,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
}

TEST_CASE("preempt: pods with volcano.sh/preemptable false, or of a PodGroup that says so, stay",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  SECTION("pod") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    FillWithLow(cluster, config, 1, 4, MakeTask("tmpl").Preemptable(false));
    AddHigh(cluster, 1, 1);
    for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
    CHECK(cluster.evictions() == 0);
    CHECK(cluster.RunningPods("ns/high") == 0);
  }
  SECTION("PodGroup") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    FillWithLow(cluster, config, 1, 4, MakeTask("tmpl"), MakeJob("ns", "low").NotPreemptable());
    AddHigh(cluster, 1, 1);
    for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
    CHECK(cluster.evictions() == 0);
  }
}

TEST_CASE("preempt: never kube-system or system-*-critical pods, even without conformance",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  for (auto& tier : config.tiers) {
    std::erase_if(tier.plugins, [](const PluginOption& p) { return p.name == "conformance"; });
  }
  SECTION("kube-system") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    FillWithLow(cluster, config, 1, 2, MakeTask("tmpl"), MakeJob("kube-system", "low"));
    AddHigh(cluster, 1, 1);
    for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
    CHECK(cluster.evictions() == 0);
  }
  SECTION("system-node-critical") {
    FakeCluster cluster;
    cluster.AddQueue(MakeQueue("default"));
    FillWithLow(cluster, config, 1, 2, MakeTask("tmpl").PriorityClass("system-node-critical"));
    AddHigh(cluster, 1, 1);
    for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
    CHECK(cluster.evictions() == 0);
  }
}

TEST_CASE("preempt: never across queues", "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddQueue(MakeQueue("other"));
  FillWithLow(cluster, config, 1, 4, MakeTask("tmpl"));
  AddHigh(cluster, 1, 1, MakeTask("tmpl"), "other");
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
}

TEST_CASE("preempt: nothing is evicted when the preemptor's gang would still not fit",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  // 2 nodes x 2 GPUs, all low; 2 of the 4 low pods are not preemptable, so at most 2 GPUs can
  // be freed and a gang of 3 can never run.
  for (int n = 0; n < 2; ++n) {
    cluster.AddNode(MakeNode("n" + std::to_string(n))
                        .Allocatable("cpu", "32")
                        .Allocatable("nvidia.com/gpu", 2));
  }
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(1).Created(1), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  cluster.AddJob(
      MakeJob("ns", "pinned").Priority(1).MinAvailable(1).Created(1), 2,
      MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Preemptable(false));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/low") + cluster.RunningPods("ns/pinned") == 4);
  AddHigh(cluster, 3, 3);
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningPods("ns/low") == 2);
}

TEST_CASE("preempt: preemptionPolicy Never waits", "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  FillWithLow(cluster, config, 1, 2, MakeTask("tmpl"));
  AddHigh(cluster, 1, 1, MakeTask("tmpl").PreemptNever());
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
}

TEST_CASE("preempt: the fewest victims, lowest priority first, then the youngest",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("a")
                      .Allocatable("cpu", "32")
                      .Allocatable("nvidia.com/gpu", 2)
                      .Label("kubernetes.io/hostname", "a"));
  cluster.AddNode(MakeNode("b")
                      .Allocatable("cpu", "32")
                      .Allocatable("nvidia.com/gpu", 2)
                      .Label("kubernetes.io/hostname", "b"));
  // Node a: two 1-GPU pods of "small"; node b: one 2-GPU pod of "big". Same priority.
  cluster.AddJob(MakeJob("ns", "small").Priority(1).MinAvailable(1).Created(1), 2,
                 MakeTask("tmpl")
                     .Request("cpu", "1")
                     .Request("nvidia.com/gpu", 1)
                     .NodeSelector("kubernetes.io/hostname", "a"));
  cluster.AddJob(MakeJob("ns", "big").Priority(1).MinAvailable(1).Created(1), 1,
                 MakeTask("tmpl")
                     .Request("cpu", "1")
                     .Request("nvidia.com/gpu", 2)
                     .NodeSelector("kubernetes.io/hostname", "b"));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/small") == 2);
  REQUIRE(cluster.RunningPods("ns/big") == 1);
  // "small" keeps minAvailable 1, so node a frees 2 GPUs only by taking all of "small" (2
  // victims); b frees 2 with one victim, the whole of "big".
  cluster.AddJob(MakeJob("ns", "high").Priority(100).MinAvailable(1).Created(5), 1,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 2).Priority(100));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());  // pods, evictions, binds
  REQUIRE(cluster.evicted_uids().size() == 1);
  CHECK(cluster.evicted_uids()[0] == "ns/big/big-task-0");
  CHECK(cluster.RunningPods("ns/high") == 1);
  CHECK(cluster.RunningPods("ns/small") == 2);
}

TEST_CASE("preempt: lower job priority goes first, and of equal priority the youngest pod",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  cluster.AddJob(MakeJob("ns", "mid").Priority(50).MinAvailable(1).Created(1), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  cluster.AddJob(MakeJob("ns", "low").Priority(5).MinAvailable(1).Created(1), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/mid") + cluster.RunningPods("ns/low") == 4);
  cluster.AddJob(MakeJob("ns", "high").Priority(100).MinAvailable(1).Created(5), 1,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(100));
  REQUIRE(cluster.RunCycle(config).ok());  // admitted; the "controller" creates its pod
  REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.evicted_uids().size() == 1);
  CHECK(cluster.evicted_uids()[0].rfind("ns/low/", 0) == 0);
  REQUIRE(cluster.last_evictions().size() == 1);
  const EvictionCause& cause = cluster.last_evictions()[0];
  CHECK(cause.reason == "preempt");
  CHECK(cause.preemptor_job == "ns/high");
  CHECK(cause.preemptor_queue == "default");
  CHECK(cause.preemptor_priority == 100);
  CHECK(cause.Message() == "preempt: making room for job ns/high (queue default, priority 100)");
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/high") == 1);
  CHECK(cluster.evictions() == 1);  // no churn afterwards
}

TEST_CASE("preempt: an online job takes exactly what it needs from elastic offline jobs",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  FillWithLow(cluster, config, 4, 8, MakeTask("tmpl"));
  REQUIRE(cluster.RunningPods("ns/low") == 32);
  AddHigh(cluster, 6, 6);
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/high") == 6);
  CHECK(cluster.evictions() == 6);
  std::set<std::string> unique(cluster.evicted_uids().begin(), cluster.evicted_uids().end());
  CHECK(unique.size() == cluster.evicted_uids().size());
  for (const auto& uid : cluster.evicted_uids()) CHECK(uid.rfind("ns/low/", 0) == 0);
}

TEST_CASE("preempt: on 100 nodes full of offline work, exactly the minimum is evicted",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  for (int n = 0; n < 100; ++n) {
    cluster.AddNode(MakeNode(fmt::format("n{:03}", n))
                        .Allocatable("cpu", "64")
                        .Allocatable("nvidia.com/gpu", 8));
  }
  // 25 elastic offline jobs of 32 x 1 GPU (minAvailable 8) fill the 800 GPUs.
  for (int j = 0; j < 25; ++j) {
    cluster.AddJob(
        MakeJob("ns", fmt::format("off-{:02}", j)).Priority(100).MinAvailable(8).Created(1), 32,
        MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(100));
  }
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(config).ok());
  int offline = 0;
  for (int j = 0; j < 25; ++j) offline += cluster.RunningPods(fmt::format("ns/off-{:02}", j));
  REQUIRE(offline == 800);
  // An online gang of 16 x 2 GPUs needs 32 GPUs: 32 one-GPU victims, paired on 16 nodes.
  cluster.AddJob(
      MakeJob("ns", "online").Priority(1000000).MinAvailable(16).Created(9), 16,
      MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 2).Priority(1000000));
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/online") == 16);
  CHECK(cluster.evictions() == 32);
  std::set<std::string> unique(cluster.evicted_uids().begin(), cluster.evicted_uids().end());
  CHECK(unique.size() == 32);
}

TEST_CASE("preempt: within a job, a higher-priority task evicts a lower-priority one",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 3));
  // A more important job holds one GPU; "mixed" (minAvailable 3) runs 2 pods of priority 1.
  cluster.AddJob(MakeJob("ns", "blocker").Priority(100).MinAvailable(1).Created(1), 1,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(100));
  cluster.AddJob(MakeJob("ns", "mixed").Priority(1).MinAvailable(2).Created(1), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/mixed") == 2);
  REQUIRE(cluster.RunningPods("ns/blocker") == 1);
  // Two more pods of "mixed" (it now needs 3): one urgent (priority 10), one ordinary.
  cluster.SetMinAvailable("ns/mixed", 3);
  cluster.AddPodToJob("ns/mixed", MakeTask("mixed-urgent")
                                      .Uid("ns/mixed/urgent")
                                      .Request("cpu", "1")
                                      .Request("nvidia.com/gpu", 1)
                                      .Priority(10));
  REQUIRE(cluster.RunCycle(config).ok());
  // The blocker is of a more important job: the urgent pod takes a slot of its own job.
  REQUIRE(cluster.evicted_uids().size() == 1);
  CHECK(cluster.evicted_uids()[0].rfind("ns/mixed/mixed-task-", 0) == 0);
  CHECK(cluster.RunningPods("ns/blocker") == 1);
}

// Issue 12: the steady co-location scenario (e2e controllers/preempt_steady) on a model cluster.
// Evicted pods stay Releasing for two cycles and their job restarts (PodEvicted -> RestartJob),
// as with the job controller and a grace period.
MakeNode HostNode(const std::string& name, int gpus) {
  return MakeNode(name)
      .Allocatable("cpu", "32")
      .Allocatable("nvidia.com/gpu", gpus)
      .Label("kubernetes.io/hostname", name);
}

MakeTask OfflinePod(const std::string& host) {
  return MakeTask("tmpl")
      .Request("cpu", "1")
      .Request("nvidia.com/gpu", 1)
      .Priority(100)
      .NodeSelector("kubernetes.io/hostname", host);
}

// An offline job of one pod per host in `hosts` (minAvailable = its size).
void AddSpreadOffline(FakeCluster& cluster, const std::string& name,
                      const std::vector<std::string>& hosts) {
  cluster.AddJob(
      MakeJob("ns", name).Priority(100).MinAvailable(static_cast<int32_t>(hosts.size())).Created(1),
      0, MakeTask("unused"));
  for (size_t i = 0; i < hosts.size(); ++i) {
    cluster.AddPodToJob(fmt::format("ns/{}", name),
                        OfflinePod(hosts[i]).Uid(fmt::format("ns/{}/{}-{}", name, name, i)));
  }
}

void CheckNoPodEvictedTwice(const FakeCluster& cluster) {
  std::set<std::string> unique(cluster.evicted_uids().begin(), cluster.evicted_uids().end());
  CHECK(unique.size() == cluster.evicted_uids().size());
}

TEST_CASE("preempt: a spare pod taken first is reprieved when a whole victim job covers the gang",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.SetEvictionGrace(2, /*restart_job=*/true);
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(HostNode("a", 3));
  cluster.AddNode(HostNode("b", 2));
  // "spare" (3 pods on a, minAvailable 2) can lose one pod; "pair" (2 pods on b, minAvailable
  // 2) only goes whole. Before the fix the first online pod took spare's pod and the second the
  // whole of "pair" (or the rest of "spare"): 3 evictions for 2 pods.
  cluster.AddJob(MakeJob("ns", "spare").Priority(100).MinAvailable(2).Created(1), 3,
                 OfflinePod("a"));
  cluster.AddJob(MakeJob("ns", "pair").Priority(100).MinAvailable(2).Created(1), 2,
                 OfflinePod("b"));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/spare") == 3);
  REQUIRE(cluster.RunningPods("ns/pair") == 2);
  AddHigh(cluster, 2, 2);
  for (int i = 0; i < 7; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/high") == 2);
  CHECK(cluster.evictions() == 2);
  for (const auto& uid : cluster.evicted_uids()) CHECK(uid.rfind("ns/pair/", 0) == 0);
  CHECK(cluster.RunningPods("ns/spare") == 3);
  CheckNoPodEvictedTwice(cluster);
}

TEST_CASE("preempt: a whole victim job spread over several nodes makes room for an online gang",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.SetEvictionGrace(2, /*restart_job=*/true);
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(HostNode("a", 2));
  cluster.AddNode(HostNode("b", 2));
  // Two offline gangs at their minAvailable, each with one pod on a and one on b: no node holds
  // a whole job, so before the fix nothing was ever evicted and the online job waited.
  AddSpreadOffline(cluster, "off-1", {"a", "b"});
  AddSpreadOffline(cluster, "off-2", {"a", "b"});
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/off-1") == 2);
  REQUIRE(cluster.RunningPods("ns/off-2") == 2);
  AddHigh(cluster, 2, 2);
  REQUIRE(cluster.RunCycle(config).ok());  // admitted; its pods are created
  REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 2);  // one whole job, in the first cycle that can
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/high") == 2);
  CHECK(cluster.evictions() == 2);
  const std::string victim_job = cluster.evicted_uids().at(0).substr(0, 8);
  for (const auto& uid : cluster.evicted_uids()) CHECK(uid.rfind(victim_job, 0) == 0);
  CheckNoPodEvictedTwice(cluster);
}

TEST_CASE("preempt: victims still Releasing count as freed, in the next cycles no more are evicted",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.SetEvictionGrace(4);
  cluster.AddQueue(MakeQueue("default"));
  FillWithLow(cluster, config, 2, 4, MakeTask("tmpl"));
  REQUIRE(cluster.RunningPods("ns/low") == 8);
  AddHigh(cluster, 3, 3);
  REQUIRE(cluster.RunCycle(config).ok());  // admitted; its pods are created
  REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 3);
  CHECK(cluster.ReleasingPods("ns/low") == 3);
  // The victims terminate for four cycles: the online pods wait on the room they free, and
  // nobody else is evicted for them.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(cluster.RunCycle(config).ok());
    CHECK(cluster.last_evictions().empty());
    CHECK(cluster.ReleasingPods("ns/low") == 3);
    CHECK(cluster.RunningPods("ns/high") == 0);
  }
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/high") == 3);
  CHECK(cluster.evictions() == 3);
  CheckNoPodEvictedTwice(cluster);
}

TEST_CASE("preempt: two online jobs in one cycle evict disjoint victims, one each",
          "[sched][preempt]") {
  SchedulerConfig config = PreemptConfig();
  FakeCluster cluster;
  cluster.SetEvictionGrace(2, /*restart_job=*/true);
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(HostNode("a", 4));
  cluster.AddNode(HostNode("b", 4));
  // Two elastic offline jobs of 4 (minAvailable 2), one per node: two spare pods each.
  cluster.AddJob(MakeJob("ns", "off-a").Priority(100).MinAvailable(2).Created(1), 4,
                 OfflinePod("a"));
  cluster.AddJob(MakeJob("ns", "off-b").Priority(100).MinAvailable(2).Created(1), 4,
                 OfflinePod("b"));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningPods("ns/off-a") + cluster.RunningPods("ns/off-b") == 8);
  for (const char* name : {"serve-1", "serve-2"}) {
    cluster.AddJob(
        MakeJob("ns", name).Priority(1000000).MinAvailable(1).Created(5), 1,
        MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(1000000));
  }
  for (int i = 0; i < 7; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/serve-1") == 1);
  CHECK(cluster.RunningPods("ns/serve-2") == 1);
  CHECK(cluster.evictions() == 2);
  CheckNoPodEvictedTwice(cluster);
}

}  // namespace
}  // namespace basalt::sched

// ---- A job with a hard networkTopology: victims and placement inside one HyperNode ----

namespace basalt::sched {
namespace {

namespace hard_topology {

// Switch of node nI: s0 for n0..n3, s1 for n4..n7.
std::string SwitchOf(const std::string& node) { return node < "n4" ? "s0" : "s1"; }

// preempt's configuration with the network-topology-aware plugin.
SchedulerConfig Config() {
  SchedulerConfig config = PreemptConfig();
  PluginOption plugin;
  plugin.name = "network-topology-aware";
  config.tiers.back().plugins.push_back(std::move(plugin));
  return config;
}

// Eight 2-GPU nodes, s0 = n0..n3 and s1 = n4..n7 under spine s2.
ClusterInfo Switches() {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < 8; ++i) {
    (void)c.AddNode(
        MakeNode(fmt::format("n{}", i)).Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 2));
  }
  c.set_hypernodes(
      testing::SwitchesUnderSpine({{"n0", "n1", "n2", "n3"}, {"n4", "n5", "n6", "n7"}}));
  return c;
}

// A Running 1-GPU pod of job `job` on `node`.
void AddRunning(ClusterInfo& c, const std::string& job, const std::string& name,
                const std::string& node, int32_t priority = 1) {
  (void)c.AddTask(MakeTask(name)
                      .Job(job)
                      .Priority(priority)
                      .Request("cpu", "1")
                      .Request("nvidia.com/gpu", 1)
                      .Node(node)
                      .Status(TaskStatus::kRunning));
}

// The Running priority-1 job "ns/<name>" (not preemptable when `keep`), with 1-GPU pods
// <name>-NN on node n(NN / 2) for NN in [from, to) but `skip`.
void AddRunningJob(ClusterInfo& c, const std::string& name, int from, int to, bool keep = false,
                   int skip = -1) {
  MakeJob job = MakeJob("ns", name).MinAvailable(1).Priority(1).Phase(PodGroupPhase::kRunning);
  if (keep) job.NotPreemptable();
  (void)c.AddJob(job);
  for (int i = from; i < to; ++i) {
    if (i != skip)
      AddRunning(c, "ns/" + name, fmt::format("{}-{:02}", name, i), fmt::format("n{}", i / 2));
  }
}

// The high-priority job "ns/high": `pending` pods of `gpus` GPUs, minAvailable `min`, hard
// up to `tier` (no networkTopology if tier is 0).
void AddHigh(ClusterInfo& c, int pending, int gpus, int min, int tier,
             PodGroupPhase phase = PodGroupPhase::kInqueue) {
  JobInfo job = MakeJob("ns", "high").MinAvailable(min).Priority(1000).Phase(phase).Created(5);
  if (tier > 0) {
    job.network_topology =
        NetworkTopologyConstraint{.hard = true, .highest_tier = tier, .highest_tier_name = ""};
  }
  (void)c.AddJob(std::move(job));
  for (int i = 0; i < pending; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("high-{}", i))
                        .Job("ns/high")
                        .Priority(1000)
                        .Request("cpu", "1")
                        .Request("nvidia.com/gpu", gpus));
  }
}

struct Cycle : testing::OneCycle {
  std::map<std::string, std::string> node_of;  // pod uid -> node, before the cycle

  absl::Status Run(ClusterInfo c) {
    for (const auto& [id, job] : c.jobs()) {
      for (const auto& [uid, t] : job.tasks()) node_of[uid] = t.node_name;
    }
    return OneCycle::Run(std::move(c), Config());
  }
  std::set<std::string> EvictedSwitches() const {
    std::set<std::string> out;
    for (const auto& [uid, reason] : evictor.evicted) out.insert(SwitchOf(node_of.at(uid)));
    return out;
  }
  // Switches the high job's pods were nominated on (pipelined by preempt).
  std::set<std::string> NominatedSwitches() const {
    std::set<std::string> out;
    for (const auto& u : sink.pods) {
      if (u.task_uid.find("high-") == std::string::npos) continue;
      if (!u.condition.nominated_node_name.empty()) {
        out.insert(SwitchOf(u.condition.nominated_node_name));
      }
    }
    return out;
  }
};

}  // namespace hard_topology

TEST_CASE("preempt: a hard tier-1 gang takes its victims and its nodes inside one switch",
          "[sched][preempt][topology]") {
  // s0 full of preemptable low pods; s1 holds a non-preemptable job and one free GPU (n4).
  ClusterInfo c = hard_topology::Switches();
  hard_topology::AddRunningJob(c, "low", 0, 8);
  hard_topology::AddRunningJob(c, "keep", 8, 16, /*keep=*/true, /*skip=*/9);  // n4's 2nd GPU free
  hard_topology::Cycle cycle;

  SECTION("hard tier 1: two victims in s0, both pods there; n4's free GPU is not used") {
    hard_topology::AddHigh(c, 2, 1, 2, 1);
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.evictor.evicted.size() == 2);
    CHECK(cycle.EvictedSwitches() == std::set<std::string>{"s0"});
    CHECK(cycle.NominatedSwitches() == std::set<std::string>{"s0"});
  }
  SECTION("without networkTopology: the free GPU in s1 and one victim in s0 (the gang spans)") {
    hard_topology::AddHigh(c, 2, 1, 2, 0);
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.evictor.evicted.size() == 1);
    CHECK(cycle.NominatedSwitches() == std::set<std::string>{"s0", "s1"});
  }
}

TEST_CASE(
    "preempt: nothing is evicted for a hard gang no allowed HyperNode can hold, and it "
    "says why",
    "[sched][preempt][topology]") {
  ClusterInfo c = hard_topology::Switches();
  hard_topology::AddRunningJob(c, "low", 0, 16);
  hard_topology::Cycle cycle;
  SECTION("tier 1: 10 GPUs, a switch has 8") {
    hard_topology::AddHigh(c, 5, 2, 5, 1);
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.evictor.evicted.empty());
    CHECK_THAT(cycle.Unschedulable("ns/high"),
               Catch::Contains("preempt: hard tier 1: no HyperNode of tier ≤ 1 has 10 "
                               "allocatable nvidia.com/gpu; best s0 has 8"));
  }
  SECTION("tier 2 allowed: the spine holds it, 10 victims") {
    hard_topology::AddHigh(c, 5, 2, 5, 2);
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.evictor.evicted.size() == 10);
  }
}

TEST_CASE(
    "preempt: a pending task of a hard job with a running task stays in that task's "
    "switch",
    "[sched][preempt][topology]") {
  // high-r runs on n4 (s1); s1 is otherwise full of low pods; n0 (s0) has two free GPUs.
  ClusterInfo c = hard_topology::Switches();
  hard_topology::AddRunningJob(c, "low", 2, 16, /*keep=*/false, /*skip=*/8);  // 8: high-r's GPU
  hard_topology::Cycle cycle;
  SECTION("hard tier 1: one victim in s1, the task nominated there") {
    hard_topology::AddHigh(c, 1, 1, 2, 1, PodGroupPhase::kRunning);
    hard_topology::AddRunning(c, "ns/high", "high-r", "n4", 1000);
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.binder.Bound().empty());  // allocate may not use n0's free GPUs
    CHECK(cycle.evictor.evicted.size() == 1);
    CHECK(cycle.EvictedSwitches() == std::set<std::string>{"s1"});
    CHECK(cycle.NominatedSwitches() == std::set<std::string>{"s1"});
  }
  SECTION("without networkTopology the free GPU on n0 is used, nothing evicted") {
    hard_topology::AddHigh(c, 1, 1, 2, 0, PodGroupPhase::kRunning);
    hard_topology::AddRunning(c, "ns/high", "high-r", "n4", 1000);
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.evictor.evicted.empty());
    CHECK(cycle.BoundNodes("high-0") == std::multiset<std::string>{"n0"});
  }
}

}  // namespace
}  // namespace basalt::sched
