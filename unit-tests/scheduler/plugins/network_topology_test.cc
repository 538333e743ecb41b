// network-topology-aware with the allocate action: hard and soft modes, HyperNode binpack and
// the explanation of a gang that waits for its topology.
#include "scheduler/plugins/network_topology/network_topology.h"

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

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

const std::string kConfig = testing::SchedConfYaml("enqueue, allocate, backfill",
                                                   testing::PluginEntry("network-topology-aware"));

struct Cycle : testing::OneCycle {
  Cycle() : OneCycle(kConfig) {}
  std::set<std::string> NodesOf(const std::string& prefix) const {
    const std::multiset<std::string> nodes = BoundNodes(prefix);
    return {nodes.begin(), nodes.end()};
  }
};

// Two switches of two 4-GPU nodes (s0: n0 n1, s1: n2 n3) under spine s2. `used` GPUs of n0 are
// taken by a pod outside any gang.
ClusterInfo TwoSwitches(int used_on_n0) {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < 4; ++i) {
    (void)c.AddNode(MakeNode(fmt::format("n{}", i))
                        .Allocatable("cpu", "32")
                        .Allocatable("memory", "128Gi")
                        .Allocatable("nvidia.com/gpu", 4));
  }
  if (used_on_n0 > 0) {
    (void)c.AddTask(MakeTask("other")
                        .Request("nvidia.com/gpu", used_on_n0)
                        .Node("n0")
                        .Status(TaskStatus::kRunning));
  }
  c.set_hypernodes(testing::SwitchesUnderSpine({{"n0", "n1"}, {"n2", "n3"}}));
  return c;
}

void AddGang(ClusterInfo& c, const std::string& name, int pods, int gpus, bool hard,
             std::optional<int32_t> tier) {
  JobInfo job = MakeJob("ns", name).MinAvailable(pods).Build();
  job.network_topology =
      NetworkTopologyConstraint{.hard = hard, .highest_tier = tier, .highest_tier_name = ""};
  (void)c.AddJob(std::move(job));
  for (int i = 0; i < pods; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("{}-{}", name, i))
                        .Job(fmt::format("ns/{}", name))
                        .Request("cpu", "1")
                        .Request("nvidia.com/gpu", gpus));
  }
}

TEST_CASE("network-topology-aware: hard tier 1 keeps the gang inside one switch",
          "[sched][plugins][topology]") {
  ClusterInfo c = TwoSwitches(2);  // s0 has 6 GPUs free, s1 has 8
  AddGang(c, "a", 2, 4, true, 1);  // 8 GPUs: only s1 holds it
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.NodesOf("a-") == std::set<std::string>{"n2", "n3"});
}

TEST_CASE("network-topology-aware: a gang too big for tier 1 waits, says why, and binds at tier 2",
          "[sched][plugins][topology]") {
  {
    ClusterInfo c = TwoSwitches(2);
    AddGang(c, "big", 3, 4, true, 1);  // 12 GPUs: no switch has them
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.binder.calls.empty());
    const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/big");
    REQUIRE(pg != nullptr);
    const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
    REQUIRE(cond != nullptr);
    CHECK_THAT(cond->message,
               Catch::Contains("Origin reason is hard tier 1: no HyperNode of tier ≤ 1 has 12 "
                               "free nvidia.com/gpu; best s1 has 8"));
  }
  {
    ClusterInfo c = TwoSwitches(2);
    AddGang(c, "big", 3, 4, true, 2);  // the spine has 14 free
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("big-").size() == 3);
  }
}

TEST_CASE("network-topology-aware: HyperNode binpack puts a small gang in the used switch",
          "[sched][plugins][topology]") {
  ClusterInfo c = TwoSwitches(2);  // s0 partly used, s1 free
  AddGang(c, "small", 1, 2, true, 1);
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  const std::set<std::string> nodes = cycle.NodesOf("small-");
  REQUIRE(nodes.size() == 1);
  CHECK((*nodes.begin() == "n0" || *nodes.begin() == "n1"));
}

TEST_CASE("network-topology-aware: soft mode uses one switch when one fits, else spreads",
          "[sched][plugins][topology]") {
  {
    ClusterInfo c = TwoSwitches(2);
    AddGang(c, "fits", 2, 4, false, std::nullopt);
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("fits-") == std::set<std::string>{"n2", "n3"});
  }
  {
    ClusterInfo c = TwoSwitches(2);
    AddGang(c, "spread", 3, 4, false, 1);  // no switch holds it: soft still places it
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("spread-").size() == 3);
  }
}

TEST_CASE("network-topology-aware: hard mode with no HyperNodes places nothing and says so",
          "[sched][plugins][topology]") {
  ClusterInfo c = TwoSwitches(0);
  c.set_hypernodes(nullptr);
  AddGang(c, "a", 1, 1, true, 1);
  AddGang(c, "free", 1, 1, false, 1);  // soft: runs anyway
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.NodesOf("a-").empty());
  CHECK(cycle.NodesOf("free-").size() == 1);
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/a");
  REQUIRE(pg != nullptr);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message, Catch::Contains("hard tier 1: no HyperNode of tier ≤ 1 exists"));
}

// A job with one task "w" in `partitions` partitions of `size` pods x `gpus` GPUs, grouped as
// the job controller writes it (subGroupPolicy name w, matchLabelKeys volcano.sh/partition-id).
void AddPartitionedJob(ClusterInfo& c, const std::string& name, int partitions, int size, int gpus,
                       std::optional<NetworkTopologyConstraint> nt, int min_sub_groups,
                       int min_available) {
  JobInfo job = MakeJob("ns", name).MinAvailable(min_available).Build();
  SubGroupPolicy policy;
  policy.name = "w";
  policy.sub_group_size = size;
  policy.min_sub_groups = min_sub_groups;
  policy.selector = LabelSelector{{{"volcano.sh/task-spec", "w"}}, {}};
  policy.match_label_keys = {"volcano.sh/partition-id"};
  policy.network_topology = nt;
  job.sub_group_policies.push_back(std::move(policy));
  (void)c.AddJob(std::move(job));
  for (int p = 0; p < partitions; ++p) {
    for (int i = 0; i < size; ++i) {
      (void)c.AddTask(MakeTask(fmt::format("{}-p{}-{}", name, p, i))
                          .Job(fmt::format("ns/{}", name))
                          .Label("volcano.sh/task-spec", "w")
                          .Label("volcano.sh/partition-id", std::to_string(p))
                          .Request("cpu", "1")
                          .Request("nvidia.com/gpu", gpus));
    }
  }
}

std::string SwitchOf(const std::string& node) { return node == "n0" || node == "n1" ? "s0" : "s1"; }

std::string UnschedulableMessage(const Cycle& cycle, const std::string& job) {
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup(job);
  if (pg == nullptr) return "";
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  return cond == nullptr ? "" : cond->message;
}

NetworkTopologyConstraint Constraint(bool hard, std::optional<int32_t> tier) {
  return NetworkTopologyConstraint{.hard = hard, .highest_tier = tier, .highest_tier_name = ""};
}
const NetworkTopologyConstraint kHardTier1 = Constraint(true, 1);

TEST_CASE("network-topology-aware: partitions of 4 land in one switch each",
          "[sched][plugins][topology][partitions]") {
  ClusterInfo c = TwoSwitches(0);  // 2 switches x 8 GPUs
  // 4 partitions x 4 pods x 1 GPU: the whole cluster, two partitions per switch.
  AddPartitionedJob(c, "job", 4, 4, 1, kHardTier1, 0, 16);
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.binder.Bound().size() == 16);
  std::map<std::string, int> partitions_per_switch;
  for (int p = 0; p < 4; ++p) {
    std::set<std::string> switches;
    for (const std::string& n : cycle.NodesOf(fmt::format("job-p{}-", p))) {
      switches.insert(SwitchOf(n));
    }
    INFO("partition " << p);
    REQUIRE(switches.size() == 1);
    ++partitions_per_switch[*switches.begin()];
  }
  CHECK(partitions_per_switch == std::map<std::string, int>{{"s0", 2}, {"s1", 2}});
}

TEST_CASE("network-topology-aware: a partition that fits no switch stays unplaced and says why",
          "[sched][plugins][topology][partitions]") {
  ClusterInfo c = TwoSwitches(0);
  AddPartitionedJob(c, "big", 1, 3, 4, kHardTier1, 0, 3);  // 12 GPUs, a switch has 8
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.binder.calls.empty());
  CHECK_THAT(UnschedulableMessage(cycle, "ns/big"),
             Catch::Contains("sub-group w-0: hard tier 1: no HyperNode of tier ≤ 1 has 12 free "
                             "nvidia.com/gpu; best s0 has 8"));
}

TEST_CASE("network-topology-aware: below minSubGroups nothing of the job is bound",
          "[sched][plugins][topology][partitions]") {
  // s0 has 6 GPUs free, s1 8: of two partitions of 2 x 4 GPUs only one finds a switch.
  {
    ClusterInfo c = TwoSwitches(2);
    AddPartitionedJob(c, "two", 2, 2, 4, kHardTier1, 2, 2);  // minMember alone would allow one
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("two-").empty());
    CHECK_THAT(UnschedulableMessage(cycle, "ns/two"),
               Catch::Contains("sub-group w-1: hard tier 1: no HyperNode of tier ≤ 1 has 8 free "
                               "nvidia.com/gpu; best s0 has 6"));
  }
  {
    ClusterInfo c = TwoSwitches(2);
    AddPartitionedJob(c, "one", 2, 2, 4, kHardTier1, 1, 2);  // one partition is enough
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("one-p0-") == std::set<std::string>{"n2", "n3"});
    CHECK(cycle.NodesOf("one-p1-").empty());
  }
}

TEST_CASE("network-topology-aware: soft partitions keep to one switch when they can",
          "[sched][plugins][topology][partitions]") {
  {
    ClusterInfo c = TwoSwitches(2);
    AddPartitionedJob(c, "fits", 1, 2, 4, Constraint(false, std::nullopt), 0, 2);
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("fits-") == std::set<std::string>{"n2", "n3"});
  }
  {
    ClusterInfo c = TwoSwitches(0);
    AddPartitionedJob(c, "spread", 1, 3, 4, Constraint(false, std::nullopt), 0, 3);
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.NodesOf("spread-").size() == 3);  // no switch holds it: soft still places it
  }
}

TEST_CASE("network-topology-aware: the job's own hard constraint bounds its partitions",
          "[sched][plugins][topology][partitions]") {
  ClusterInfo c = TwoSwitches(2);
  // Partitions without a constraint of their own, job hard tier 1: all inside s1.
  AddPartitionedJob(c, "bounded", 2, 1, 4, std::nullopt, 0, 2);
  Cycle cycle;
  {
    JobInfo* job = c.FindJob("ns/bounded");
    REQUIRE(job != nullptr);
    job->network_topology = kHardTier1;
  }
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.NodesOf("bounded-") == std::set<std::string>{"n2", "n3"});
}

TEST_CASE("network-topology-aware: pods beyond a sub-group's size join it in its HyperNode",
          "[sched][plugins][topology][partitions]") {
  ClusterInfo c = TwoSwitches(0);  // 8 GPUs free per switch
  // One policy without matchLabelKeys: one sub-group of all 4 pods x 2 GPUs, subGroupSize 2;
  // the 2 beyond its size are placed too, in the switch the sub-group went to.
  AddPartitionedJob(c, "elastic", 1, 4, 2, kHardTier1, 1, 2);
  {
    JobInfo* job = c.FindJob("ns/elastic");
    REQUIRE(job != nullptr);
    job->sub_group_policies[0].sub_group_size = 2;
    job->sub_group_policies[0].match_label_keys.clear();
  }
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  const std::set<std::string> nodes = cycle.NodesOf("elastic-");
  CHECK(cycle.binder.Bound().size() == 4);
  std::set<std::string> switches;
  for (const std::string& n : nodes) switches.insert(SwitchOf(n));
  CHECK(switches.size() == 1);
}

TEST_CASE("network-topology-aware: arguments", "[sched][plugins][topology]") {
  Arguments ok;
  CHECK(NewNetworkTopologyPlugin(ok).ok());
}

}  // namespace
}  // namespace basalt::sched
