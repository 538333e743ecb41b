#include "scheduler/actions/reclaim/reclaim.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "fmt/format.h"
#include "unit-tests/scheduler/testing/cycle.h"
#include "unit-tests/scheduler/testing/fakes.h"
#include "unit-tests/scheduler/testing/gangs.h"
#include "unit-tests/scheduler/testing/hypernodes.h"

namespace basalt::sched {
namespace {

using testing::AddGpuGang;
using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

SchedulerConfig WithReclaim() {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("reclaim");
  return config;
}

void AddJobs(FakeCluster& cluster, const std::string& queue, int count, int created_offset) {
  for (int j = 0; j < count; ++j) {
    cluster.AddJob(MakeJob("ns", queue + "-job" + std::to_string(j))
                       .Queue(queue)
                       .MinResources("nvidia.com/gpu", 1)
                       .Phase(PodGroupPhase::kPending)
                       .Created(created_offset + j),
                   1, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  }
}

TEST_CASE(
    "reclaim: a late queue of weight 3 takes back its share from a queue that filled the "
    "cluster",
    "[sched][reclaim][fairness]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("q1").Weight(1).Created(1));
  cluster.AddQueue(MakeQueue("q3").Weight(3).Created(2));
  for (int i = 1; i <= 4; ++i) {
    cluster.AddNode(MakeNode("n" + std::to_string(i))
                        .Allocatable("cpu", "32")
                        .Allocatable("memory", "128Gi")
                        .Allocatable("nvidia.com/gpu", 4));
  }
  AddJobs(cluster, "q1", 16, 0);
  const SchedulerConfig config = WithReclaim();
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 16000);  // alone, it takes everything

  AddJobs(cluster, "q3", 20, 100);
  for (int i = 0; i < 30; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 4000);
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 12000);
  CHECK(cluster.evictions() == 12);  // exactly what q3 deserved, no churn
}

}  // namespace
}  // namespace basalt::sched

namespace basalt::sched {
namespace {

TEST_CASE("reclaim: pods of a non-reclaimable queue are never evicted", "[sched][reclaim]") {
  testing::FakeCluster cluster;
  cluster.AddQueue(testing::MakeQueue("q1").Reclaimable(false).Created(1));
  cluster.AddQueue(testing::MakeQueue("q3").Weight(3).Created(2));
  cluster.AddNode(
      testing::MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  AddJobs(cluster, "q1", 4, 0);
  const SchedulerConfig config = WithReclaim();
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  AddJobs(cluster, "q3", 4, 100);
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 4000);
  CHECK(cluster.evictions() == 0);
}

}  // namespace
}  // namespace basalt::sched

namespace basalt::sched {
namespace {

// Volcano #4679: on a cluster another queue filled, a gang larger than overcommit's headroom
// was never admitted, so reclaim (which serves admitted jobs only) never made room for it.
TEST_CASE(
    "reclaim: a gang only reclaim can make room for is admitted while its queue is under "
    "its share",
    "[sched][reclaim][admission]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("q1").Weight(1).Created(1));
  cluster.AddQueue(MakeQueue("q2").Weight(1).Created(2));
  for (int i = 1; i <= 4; ++i) {
    cluster.AddNode(MakeNode("n" + std::to_string(i))
                        .Allocatable("cpu", "32")
                        .Allocatable("memory", "128Gi")
                        .Allocatable("nvidia.com/gpu", 4));
  }
  AddJobs(cluster, "q1", 16, 0);
  SchedulerConfig config = WithReclaim();
  for (int i = 0; i < 8; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 16000);
  // 8 GPUs in one gang: more than overcommit's 20 % headroom (3.2 GPUs) of the full cluster.
  AddGpuGang(cluster, "q2", "big", 8, 100);

  SECTION("with reclaim configured, it is admitted and takes back its share") {
    for (int i = 0; i < 20; ++i) REQUIRE(cluster.RunCycle(config).ok());
    CHECK(cluster.RunningInQueue("q2", "nvidia.com/gpu") == 8000);
    CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 8000);
    CHECK(cluster.evictions() == 8);
  }
  SECTION("without reclaim, nothing could make room: it stays Pending, nothing is evicted") {
    const SchedulerConfig plain = DefaultSchedulerConfig();
    for (int i = 0; i < 10; ++i) REQUIRE(cluster.RunCycle(plain).ok());
    CHECK(cluster.RunningInQueue("q2", "nvidia.com/gpu") == 0);
    CHECK(cluster.evictions() == 0);
  }
}

}  // namespace
}  // namespace basalt::sched

namespace basalt::sched {
namespace {

// s0 = n0..n3, s1 = n4..n7 (2 GPUs each). q-keep (not reclaimable) holds n0..n2 and one GPU of
// n3; q-a (reclaimable, above its share) the other GPU of n3 and all of s1. q-b's job needs 2
// GPUs: without networkTopology reclaim takes n3's q-a pod and one in s1; with hard tier 1 both
// victims and both pods are in s1, the only switch where enough can be reclaimed.
struct HardTopologyReclaim : testing::OneCycle {
  std::map<std::string, std::string> node_of;  // pod uid -> node, before the cycle

  static ClusterInfo Cluster(int tier) {
    ClusterInfo c;
    (void)c.AddQueue(MakeQueue("q-keep").Reclaimable(false).Created(1));
    (void)c.AddQueue(MakeQueue("q-a").Created(2));
    (void)c.AddQueue(MakeQueue("q-b").Created(3));
    for (int i = 0; i < 8; ++i) {
      (void)c.AddNode(MakeNode(fmt::format("n{}", i))
                          .Allocatable("cpu", "32")
                          .Allocatable("nvidia.com/gpu", 2));
    }
    c.set_hypernodes(
        testing::SwitchesUnderSpine({{"n0", "n1", "n2", "n3"}, {"n4", "n5", "n6", "n7"}}));
    for (int i = 0; i < 16; ++i) {
      const std::string queue = i < 7 ? "q-keep" : "q-a";
      const std::string name = fmt::format("{}-{:02}", queue, i);
      (void)c.AddJob(
          MakeJob("ns", name).Queue(queue).MinAvailable(1).Phase(PodGroupPhase::kRunning));
      (void)c.AddTask(MakeTask(name)
                          .Job("ns/" + name)
                          .Request("cpu", "1")
                          .Request("nvidia.com/gpu", 1)
                          .Node(fmt::format("n{}", i / 2))
                          .Status(TaskStatus::kRunning));
    }
    JobInfo job = MakeJob("ns", "b").Queue("q-b").MinAvailable(2).Phase(PodGroupPhase::kInqueue);
    if (tier > 0) {
      job.network_topology =
          NetworkTopologyConstraint{.hard = true, .highest_tier = tier, .highest_tier_name = ""};
    }
    (void)c.AddJob(std::move(job));
    for (int i = 0; i < 2; ++i) {
      (void)c.AddTask(MakeTask(fmt::format("b-{}", i))
                          .Job("ns/b")
                          .Request("cpu", "1")
                          .Request("nvidia.com/gpu", 1));
    }
    return c;
  }

  absl::Status Run(int tier) {
    ClusterInfo c = Cluster(tier);
    for (const auto& [id, job] : c.jobs()) {
      for (const auto& [uid, t] : job.tasks()) node_of[uid] = t.node_name;
    }
    SchedulerConfig config = WithReclaim();
    PluginOption plugin;
    plugin.name = "network-topology-aware";
    config.tiers.back().plugins.push_back(std::move(plugin));
    return OneCycle::Run(std::move(c), config);
  }
  std::set<std::string> EvictedNodes() const {
    std::set<std::string> out;
    for (const auto& [uid, reason] : evictor.evicted) out.insert(node_of.at(uid));
    return out;
  }
  std::set<std::string> NominatedNodes() const {
    std::set<std::string> out;
    for (const auto& u : sink.pods) {
      if (u.task_uid.rfind("uid-b-", 0) == 0 && !u.condition.nominated_node_name.empty()) {
        out.insert(u.condition.nominated_node_name);
      }
    }
    return out;
  }
};

bool AllInS1(const std::set<std::string>& nodes) {
  return !nodes.empty() &&
         std::all_of(nodes.begin(), nodes.end(), [](const std::string& n) { return n >= "n4"; });
}

TEST_CASE("reclaim: a hard tier-1 job reclaims inside one switch", "[sched][reclaim][topology]") {
  HardTopologyReclaim cycle;
  SECTION("hard tier 1: both victims and both pods in s1") {
    REQUIRE(cycle.Run(1).ok());
    CHECK(cycle.evictor.evicted.size() == 2);
    CHECK(AllInS1(cycle.EvictedNodes()));
    CHECK(AllInS1(cycle.NominatedNodes()));
  }
  SECTION("without networkTopology: n3's pod in s0 is taken first (the job spans)") {
    REQUIRE(cycle.Run(0).ok());
    CHECK(cycle.EvictedNodes().count("n3") == 1);
    CHECK(!AllInS1(cycle.NominatedNodes()));
  }
}

}  // namespace
}  // namespace basalt::sched
