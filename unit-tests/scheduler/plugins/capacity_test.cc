#include "scheduler/plugins/capacity/capacity.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "scheduler/conf/config.h"
#include "unit-tests/scheduler/testing/fakes.h"
#include "unit-tests/scheduler/testing/gangs.h"

namespace basalt::sched {
namespace {

using testing::AddGpuGang;
using testing::AddGpuPod;
using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;
using testing::Res;

constexpr int64_t kGpu = 1000;

// Volcano's documented configuration for the capacity plugin (user guide: no overcommit, reclaim
// on), with or without the hierarchy and an ancestorReclaimLevel.
SchedulerConfig CapacityConfig(bool hierarchy = false, int ancestor_level = 0) {
  std::string capacity = "  - name: capacity\n";
  if (hierarchy) capacity += "    enableHierarchy: true\n";
  if (ancestor_level > 0) {
    capacity += fmt::format("    arguments:\n      ancestorReclaimLevel: {}\n", ancestor_level);
  }
  const std::string yaml = fmt::format(
      "actions: \"enqueue, allocate, backfill, reclaim\"\n"
      "tiers:\n"
      "- plugins:\n"
      "  - name: priority\n"
      "  - name: gang\n"
      "    enablePreemptable: false\n"
      "  - name: conformance\n"
      "- plugins:\n"
      "  - name: drf\n"
      "    enablePreemptable: false\n"
      "  - name: predicates\n"
      "{}"
      "  - name: nodeorder\n",
      capacity);
  auto config = ParseSchedulerConfig(yaml);
  REQUIRE(config.ok());
  return *config;
}

// A node of 64 CPUs and 256Gi with `gpus` whole GPUs.
NodeInfo GpuNode(const std::string& name, int gpus) {
  return MakeNode(name)
      .Allocatable("cpu", "64")
      .Allocatable("memory", "256Gi")
      .Allocatable("nvidia.com/gpu", gpus);
}

void AddPods(FakeCluster& cluster, const std::string& queue, const std::string& prefix, int n,
             int created, std::string_view cpu, std::string_view memory, int gpus = 0) {
  for (int i = 0; i < n; ++i) {
    auto job = MakeJob("ns", fmt::format("{}-{}", prefix, i))
                   .Queue(queue)
                   .MinAvailable(1)
                   .MinResources("cpu", cpu)
                   .MinResources("memory", memory)
                   .Phase(PodGroupPhase::kPending)
                   .Created(created);
    auto pod = MakeTask("tmpl").Request("cpu", cpu).Request("memory", memory);
    if (gpus > 0) {
      job.MinResources("nvidia.com/gpu", std::to_string(gpus));
      pod.Request("nvidia.com/gpu", gpus);
    }
    cluster.AddJob(job, 1, pod);
  }
}

void Run(FakeCluster& cluster, const SchedulerConfig& config, int cycles) {
  for (int c = 0; c < cycles; ++c) REQUIRE(cluster.RunCycle(config).ok());
}

std::string ConditionMessage(const FakeCluster& cluster, const std::string& job) {
  const PodGroupCondition* c = cluster.job(job).spec.podgroup_status.FindCondition("Unschedulable");
  return c == nullptr ? "" : c->message;
}

TEST_CASE("capacity: Volcano's flat formulas for realCapability and deserved",
          "[sched][capacity]") {
  const Resource total = Res({{"cpu", "8"}, {"memory", "32Gi"}});
  std::vector<CapacityQueue> queues;
  CapacityQueue q1{"q1", "", Res({{"cpu", "2"}, {"memory", "8Gi"}}),
                   Res({{"cpu", "1"}, {"memory", "4Gi"}}), std::nullopt};
  CapacityQueue q2{"q2", "", Res({{"cpu", "10"}}), Resource(),
                   Res({{"cpu", "4"}, {"memory", "0"}})};
  CapacityQueue q3{"q3", "", Resource(), Res({{"cpu", "3"}}), std::nullopt};
  const auto out = ComputeFlatCapacity(total, {q1, q2, q3});
  // realCapability = total - all guarantees (4 cpu, 4Gi) + own guarantee, capped by capability.
  CHECK(out.at("q1").real_capability == Res({{"cpu", "5"}, {"memory", "32Gi"}}));
  // memory 0 in capability means unlimited; cpu capped at 4.
  CHECK(out.at("q2").real_capability == Res({{"cpu", "4"}, {"memory", "28Gi"}}));
  // deserved clipped to realCapability...
  CHECK(out.at("q2").deserved.milli_cpu() == 4000);
  // ...and raised to the guarantee.
  CHECK(out.at("q3").deserved.milli_cpu() == 3000);
  CHECK(out.at("q1").deserved == Res({{"cpu", "2"}, {"memory", "8Gi"}}));
}

TEST_CASE("capacity: Volcano's user-guide example, queue1 lends while idle and gets 2 of 8 back",
          "[sched][capacity]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("queue1").Deserved("cpu", "2").Deserved("memory", "8Gi").Created(1));
  cluster.AddQueue(MakeQueue("queue2").Deserved("cpu", "6").Deserved("memory", "24Gi").Created(2));
  for (int i = 0; i < 2; ++i) {
    cluster.AddNode(
        MakeNode("n" + std::to_string(i)).Allocatable("cpu", "4").Allocatable("memory", "16Gi"));
  }
  const SchedulerConfig config = CapacityConfig();
  AddPods(cluster, "queue1", "demo-1", 8, 1, "1", "4Gi");
  Run(cluster, config, 3);
  CHECK(cluster.RunningInQueue("queue1", "cpu") == 8000);  // queue2 idle: queue1 takes all
  AddPods(cluster, "queue2", "demo-2", 8, 10, "1", "4Gi");
  Run(cluster, config, 10);
  CHECK(cluster.RunningInQueue("queue1", "cpu") == 2000);
  CHECK(cluster.RunningInQueue("queue2", "cpu") == 6000);
  CHECK(cluster.evictions() == 6);
  for (const auto& cause : cluster.last_evictions()) CHECK(cause.reason == "reclaim");
}

TEST_CASE("capacity: capability is a hard cap that includes the task's own request",
          "[sched][capacity]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("team").Deserved("nvidia.com/gpu", 2).Capability("nvidia.com/gpu", 5));
  cluster.AddNode(GpuNode("n0", 8));
  AddPods(cluster, "team", "a", 3, 1, "1", "1Gi", 2);
  Run(cluster, CapacityConfig(), 3);
  // 2 + 2 = 4 <= 5; a third 2-GPU pod would make 6.
  CHECK(cluster.RunningInQueue("team", "nvidia.com/gpu") == 4 * kGpu);
  CHECK_THAT(ConditionMessage(cluster, "ns/a-2"),
             Catch::Contains("queue team: capability nvidia.com/gpu 5 reached"));
}

// Issue 14: admitted PodGroups without any pod (hand-made, pods deleted for good) fill the
// queue's capability at admission only for other PodGroups without pods; jobs whose pods exist
// are admitted and run (before the fix: 0 of 4 ran, "capability ... reached (..., admitted 8)").
TEST_CASE("capacity: admitted PodGroups without pods do not hold the capability of jobs with pods",
          "[sched][capacity][stranding]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("team").Deserved("nvidia.com/gpu", 8).Capability("nvidia.com/gpu", 8));
  cluster.AddNode(GpuNode("n0", 16));
  for (int i = 0; i < 8; ++i) {
    AddGpuGang(cluster, "team", fmt::format("empty-{}", i), 1, 1, 0);
  }
  Run(cluster, CapacityConfig(), 2);
  REQUIRE(!cluster.job("ns/empty-7").spec.IsPending());
  for (int i = 0; i < 4; ++i) {
    const std::string name = fmt::format("work-{}", i);
    AddGpuGang(cluster, "team", name, 1, 2, 0);
    AddGpuPod(cluster, name);
  }
  Run(cluster, CapacityConfig(), 3);
  CHECK(cluster.RunningInQueue("team", "nvidia.com/gpu") == 4 * kGpu);
  // A fifth PodGroup without pods still waits: the 8 admitted ones and the 4 running fill 8.
  AddGpuGang(cluster, "team", "empty-late", 1, 3, 0);
  Run(cluster, CapacityConfig(), 2);
  CHECK(cluster.job("ns/empty-late").spec.IsPending());
}

TEST_CASE("capacity: a guarantee is never lent to another queue nor reclaimed",
          "[sched][capacity]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("reserved")
                       .Guarantee("nvidia.com/gpu", "4")
                       .Deserved("nvidia.com/gpu", 4)
                       .Created(1));
  cluster.AddQueue(MakeQueue("other").Deserved("nvidia.com/gpu", 16).Created(2));
  cluster.AddNode(GpuNode("n0", 16));
  const SchedulerConfig config = CapacityConfig();
  AddPods(cluster, "other", "o", 16, 1, "1", "1Gi", 1);
  Run(cluster, config, 3);
  // realCapability of `other` = 16 - 4 (reserved's guarantee) = 12.
  CHECK(cluster.RunningInQueue("other", "nvidia.com/gpu") == 12 * kGpu);
  AddPods(cluster, "reserved", "r", 6, 10, "1", "1Gi", 1);
  Run(cluster, config, 5);
  CHECK(cluster.RunningInQueue("reserved", "nvidia.com/gpu") == 4 * kGpu);
  CHECK(cluster.RunningInQueue("other", "nvidia.com/gpu") == 12 * kGpu);
  CHECK(cluster.evictions() == 0);
}

TEST_CASE("capacity: a borrower is reclaimed down to its deserved share, never below",
          "[sched][capacity]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("a").Deserved("nvidia.com/gpu", 6).Created(1));
  cluster.AddQueue(MakeQueue("b").Deserved("nvidia.com/gpu", 10).Created(2));
  cluster.AddNode(GpuNode("n0", 16));
  const SchedulerConfig config = CapacityConfig();
  AddPods(cluster, "a", "a", 16, 1, "1", "1Gi", 1);
  Run(cluster, config, 3);
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 16 * kGpu);
  AddPods(cluster, "b", "b", 4, 10, "1", "1Gi", 1);  // wants less than its deserved 10
  Run(cluster, config, 6);
  CHECK(cluster.RunningInQueue("b", "nvidia.com/gpu") == 4 * kGpu);
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 12 * kGpu);
  AddPods(cluster, "b", "b2", 12, 20, "1", "1Gi", 1);
  Run(cluster, config, 8);
  CHECK(cluster.RunningInQueue("b", "nvidia.com/gpu") == 10 * kGpu);
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 6 * kGpu);
}

// root -> org-a (deserved 32, capability 32) -> team-1, team-2 (deserved 16 each); org-b idle.
void AddOrgTree(FakeCluster& cluster) {
  cluster.AddQueue(MakeQueue("org-a")
                       .Deserved("nvidia.com/gpu", 32)
                       .Capability("nvidia.com/gpu", 32)
                       .Created(1));
  cluster.AddQueue(MakeQueue("org-b").Deserved("nvidia.com/gpu", 32).Created(2));
  cluster.AddQueue(MakeQueue("team-1").Parent("org-a").Deserved("nvidia.com/gpu", 16).Created(3));
  cluster.AddQueue(MakeQueue("team-2").Parent("org-a").Deserved("nvidia.com/gpu", 16).Created(4));
  for (int i = 0; i < 8; ++i) {
    cluster.AddNode(GpuNode("n" + std::to_string(i), 8));
  }
}

TEST_CASE("capacity: hierarchy, team-1 borrows up to its parent's cap and gives back to team-2",
          "[sched][capacity][hierarchy]") {
  FakeCluster cluster;
  AddOrgTree(cluster);
  const SchedulerConfig config = CapacityConfig(/*hierarchy=*/true);
  AddPods(cluster, "team-1", "t1", 40, 1, "1", "1Gi", 1);
  Run(cluster, config, 4);
  // 64 GPUs idle, but org-a caps its subtree at 32.
  CHECK(cluster.RunningInQueue("team-1", "nvidia.com/gpu") == 32 * kGpu);
  CHECK_THAT(ConditionMessage(cluster, "ns/t1-39"),
             Catch::Contains("queue team-1: deserved nvidia.com/gpu 16 reached (allocated 32"));
  CHECK_THAT(ConditionMessage(cluster, "ns/t1-39"),
             Catch::Contains("borrowing blocked by parent org-a capability 32"));
  AddPods(cluster, "team-2", "t2", 20, 10, "1", "1Gi", 1);
  Run(cluster, config, 10);
  INFO("team-2 job: phase " << static_cast<int>(cluster.job("ns/t2-0").spec.podgroup_status.phase)
                            << " " << ConditionMessage(cluster, "ns/t2-0"));
  CHECK(cluster.RunningInQueue("team-1", "nvidia.com/gpu") == 16 * kGpu);
  CHECK(cluster.RunningInQueue("team-2", "nvidia.com/gpu") == 16 * kGpu);
  CHECK(cluster.evictions() == 16);
  // The user's answer to "why is my job pending", in the PodGroup condition.
  bool found = false;
  for (int i = 0; i < 40 && !found; ++i) {
    const std::string msg = ConditionMessage(cluster, fmt::format("ns/t1-{}", i));
    found = msg.find(
                "queue team-1: deserved nvidia.com/gpu 16 reached (allocated 16), borrowing "
                "blocked by parent org-a capability 32") != std::string::npos;
  }
  CHECK(found);
}

TEST_CASE("capacity: hierarchy, a job in a non-leaf queue stays Pending with a message",
          "[sched][capacity][hierarchy]") {
  FakeCluster cluster;
  AddOrgTree(cluster);
  AddPods(cluster, "org-a", "parent-job", 1, 1, "1", "1Gi", 1);
  Run(cluster, CapacityConfig(/*hierarchy=*/true), 2);
  CHECK(cluster.job("ns/parent-job-0").spec.podgroup_status.phase == PodGroupPhase::kPending);
  CHECK_THAT(ConditionMessage(cluster, "ns/parent-job-0"),
             Catch::Contains("queue org-a is not a leaf queue (children: team-1, team-2)"));
}

TEST_CASE("capacity: hierarchy, a queue whose parent is missing refuses its jobs alone",
          "[sched][capacity][hierarchy]") {
  FakeCluster cluster;
  AddOrgTree(cluster);
  cluster.AddQueue(MakeQueue("lost").Parent("nowhere").Deserved("nvidia.com/gpu", 4));
  AddPods(cluster, "lost", "l", 1, 1, "1", "1Gi", 1);
  AddPods(cluster, "team-1", "t1", 2, 1, "1", "1Gi", 1);
  Run(cluster, CapacityConfig(/*hierarchy=*/true), 2);
  CHECK_THAT(ConditionMessage(cluster, "ns/l-0"),
             Catch::Contains("queue lost: parent queue nowhere not found"));
  CHECK(cluster.RunningInQueue("team-1", "nvidia.com/gpu") == 2 * kGpu);
}

TEST_CASE("capacity: hierarchy, children's guarantees are held within the parent",
          "[sched][capacity][hierarchy]") {
  FakeCluster cluster;
  cluster.AddQueue(
      MakeQueue("org").Deserved("nvidia.com/gpu", 16).Capability("nvidia.com/gpu", 16));
  cluster.AddQueue(MakeQueue("a").Parent("org").Deserved("nvidia.com/gpu", 8));
  cluster.AddQueue(
      MakeQueue("b").Parent("org").Guarantee("nvidia.com/gpu", "6").Deserved("nvidia.com/gpu", 8));
  cluster.AddNode(GpuNode("n0", 32));
  AddPods(cluster, "a", "a", 20, 1, "1", "1Gi", 1);
  Run(cluster, CapacityConfig(/*hierarchy=*/true), 4);
  // a's realCapability = org's 16 - b's guarantee 6.
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 10 * kGpu);
}

TEST_CASE("capacity: queue priority orders queues before their shares", "[sched][capacity]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("low").Deserved("nvidia.com/gpu", 8).Created(1));
  cluster.AddQueue(MakeQueue("high").Priority(10).Deserved("nvidia.com/gpu", 2).Created(2));
  cluster.AddNode(GpuNode("n0", 4));
  AddPods(cluster, "low", "l", 4, 1, "1", "1Gi", 1);
  AddPods(cluster, "high", "h", 4, 2, "1", "1Gi", 1);
  REQUIRE(cluster.RunCycle(CapacityConfig()).ok());  // admission
  REQUIRE(cluster.RunCycle(CapacityConfig()).ok());  // placement
  // high goes first though it is over its deserved share; it may borrow all 4.
  CHECK(cluster.RunningInQueue("high", "nvidia.com/gpu") == 4 * kGpu);
}

TEST_CASE("capacity: ancestorReclaimLevel keeps reclaim inside an organisation that is not over",
          "[sched][capacity][hierarchy]") {
  // org-a (deserved 32) holds 32: team-1 40 wanted, borrowed beyond its 16. org-b (deserved 32,
  // empty) arrives with work. With level 1, team-1's pods are victims only if org-a is also
  // above its deserved share: it is not (32 <= 32), so org-b takes the idle GPUs only.
  FakeCluster cluster;
  AddOrgTree(cluster);
  cluster.AddQueue(MakeQueue("team-b").Parent("org-b").Deserved("nvidia.com/gpu", 32));
  const SchedulerConfig config = CapacityConfig(/*hierarchy=*/true, /*ancestor_level=*/1);
  AddPods(cluster, "team-1", "t1", 40, 1, "1", "1Gi", 1);
  Run(cluster, config, 3);
  REQUIRE(cluster.RunningInQueue("team-1", "nvidia.com/gpu") == 32 * kGpu);
  AddPods(cluster, "team-b", "tb", 40, 10, "1", "1Gi", 1);
  Run(cluster, config, 6);
  CHECK(cluster.RunningInQueue("team-b", "nvidia.com/gpu") == 32 * kGpu);
  CHECK(cluster.RunningInQueue("team-1", "nvidia.com/gpu") == 32 * kGpu);
  CHECK(cluster.evictions() == 0);
}

// Volcano's user-guide scenarios 2 and 3 on a lab of 8 GPUs (capability) split into two
// departments (deserved 4 and `dept_b_deserved`): team-a2 holds 3 (deserved 2), team-b1 holds 5
// (deserved 1), and team-a1 (deserved 2, empty) wants 2. The lab, not the node, is full.
void AddLabTree(FakeCluster& cluster, int dept_b_deserved) {
  cluster.AddQueue(MakeQueue("lab").Capability("nvidia.com/gpu", 8).Created(1));
  cluster.AddQueue(MakeQueue("dept-a").Parent("lab").Deserved("nvidia.com/gpu", 4).Created(2));
  cluster.AddQueue(
      MakeQueue("dept-b").Parent("lab").Deserved("nvidia.com/gpu", dept_b_deserved).Created(3));
  cluster.AddQueue(MakeQueue("team-a1").Parent("dept-a").Deserved("nvidia.com/gpu", 2).Created(4));
  cluster.AddQueue(MakeQueue("team-a2").Parent("dept-a").Deserved("nvidia.com/gpu", 2).Created(5));
  cluster.AddQueue(MakeQueue("team-b1").Parent("dept-b").Deserved("nvidia.com/gpu", 1).Created(6));
  cluster.AddNode(GpuNode("n0", 16));
}

TEST_CASE(
    "capacity: ancestorReclaimLevel 1 takes from a sibling team, not from a cousin whose "
    "department is within its deserved, and says so",
    "[sched][capacity][hierarchy]") {
  FakeCluster cluster;
  const int level = GENERATE(0, 1);
  const int dept_b_deserved = GENERATE(5, 4);
  INFO("ancestorReclaimLevel " << level << ", dept-b deserved " << dept_b_deserved);
  AddLabTree(cluster, dept_b_deserved);
  const SchedulerConfig config = CapacityConfig(/*hierarchy=*/true, level);
  AddPods(cluster, "team-a2", "a2", 3, 10, "1", "1Gi", 1);
  AddPods(cluster, "team-b1", "b1", 5, 10, "1", "1Gi", 1);
  Run(cluster, config, 3);
  REQUIRE(cluster.RunningInQueue("team-a2", "nvidia.com/gpu") == 3 * kGpu);
  REQUIRE(cluster.RunningInQueue("team-b1", "nvidia.com/gpu") == 5 * kGpu);
  AddPods(cluster, "team-a1", "a1", 2, 20, "1", "1Gi", 1);
  Run(cluster, config, 10);  // long enough for an evict/re-place loop to show in evictions()
  // The sibling gives back what it holds above its deserved share at every level.
  CHECK(cluster.RunningInQueue("team-a2", "nvidia.com/gpu") == 2 * kGpu);
  if (level == 1 && dept_b_deserved == 5) {
    // dept-b holds 5 of its deserved 5: its team's pods stay, one team-a1 job waits.
    CHECK(cluster.RunningInQueue("team-a1", "nvidia.com/gpu") == 1 * kGpu);
    CHECK(cluster.RunningInQueue("team-b1", "nvidia.com/gpu") == 5 * kGpu);
    CHECK(cluster.evictions() == 1);
    const std::string waiting = cluster.RunningPods("ns/a1-0") == 0 ? "ns/a1-0" : "ns/a1-1";
    CHECK_THAT(ConditionMessage(cluster, waiting),
               Catch::Contains("reclaim: queue team-b1's pods are kept (ancestorReclaimLevel 1): "
                               "its parent dept-b is within its deserved nvidia.com/gpu 5 "
                               "(allocated 5)"));
  } else {
    // Level 0 looks at the team alone; with dept-b over its deserved 4, level 1 allows it too.
    // (dept-b's 4 of 4 was once taken to 3, below dept-a: its pod came back every cycle.)
    CHECK(cluster.RunningInQueue("team-a1", "nvidia.com/gpu") == 2 * kGpu);
    CHECK(cluster.RunningInQueue("team-b1", "nvidia.com/gpu") == 4 * kGpu);
    CHECK(cluster.evictions() == 2);
  }
}

// Random queue trees (1-3 organisations of 1-3 teams, random deserved and capabilities, no
// guarantees), floods arriving in random order while nodes are cordoned and uncordoned; once
// every node is back and the scheduler has settled: no queue exceeds its capability, and no GPU is
// idle while a team has pending work its queue chain would let it place.
TEST_CASE("capacity: random trees and floods leave no GPU idle and no capability exceeded",
          "[sched][capacity][hierarchy][random]") {
  for (unsigned seed = 1; seed <= 100; ++seed) {
    std::mt19937 rng(seed);
    auto uniform = [&rng](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    FakeCluster cluster;
    struct Team {
      std::string name;
      std::string org;
      int cap = 0;  // 0 = none
      int jobs = 0;
    };
    std::vector<Team> teams;
    std::map<std::string, int> org_cap;
    const int orgs = uniform(1, 3);
    for (int o = 0; o < orgs; ++o) {
      const std::string org = fmt::format("org{}", o);
      auto q = MakeQueue(org).Deserved("nvidia.com/gpu", uniform(8, 40)).Created(o + 1);
      org_cap[org] = uniform(0, 2) == 0 ? 0 : uniform(8, 48);
      if (org_cap[org] > 0) q.Capability("nvidia.com/gpu", org_cap[org]);
      cluster.AddQueue(q);
      const int n = uniform(1, 3);
      for (int t = 0; t < n; ++t) {
        Team team{fmt::format("{}-team{}", org, t), org, 0, uniform(4, 50)};
        auto tq = MakeQueue(team.name).Parent(org).Deserved("nvidia.com/gpu", uniform(2, 24));
        if (uniform(0, 3) == 0) {
          team.cap = uniform(2, 30);
          tq.Capability("nvidia.com/gpu", team.cap);
        }
        cluster.AddQueue(tq.Created(10 + static_cast<int>(teams.size())));
        teams.push_back(team);
      }
    }
    for (int i = 0; i < 8; ++i) {
      cluster.AddNode(MakeNode(fmt::format("n{}", i))
                          .Allocatable("cpu", "64")
                          .Allocatable("memory", "256Gi")
                          .Allocatable("nvidia.com/gpu", 8));
    }
    // ancestorReclaimLevel 0, 1 or 2 by seed (drawn apart from `rng`).
    const SchedulerConfig config = CapacityConfig(/*hierarchy=*/true, static_cast<int>(seed % 3));
    std::vector<int> order(teams.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
      const std::string node = fmt::format("n{}", uniform(0, 7));
      cluster.SetNodeUnschedulable(node, uniform(0, 1) == 0);
      AddPods(cluster, teams[i].name, teams[i].name, teams[i].jobs, 10 + i, "1", "1Gi", 1);
      Run(cluster, config, uniform(1, 3));
    }
    for (int i = 0; i < 8; ++i) cluster.SetNodeUnschedulable(fmt::format("n{}", i), false);
    Run(cluster, config, 15);
    INFO("seed " << seed);
    // Settled means settled: no evict/re-place loop (a victim's pod taking its GPU back).
    const int evictions = cluster.evictions();
    Run(cluster, config, 5);
    CHECK(cluster.evictions() == evictions);

    std::map<std::string, int64_t> org_used;
    int64_t used = 0;
    for (const auto& t : teams) {
      const int64_t u = cluster.RunningInQueue(t.name, "nvidia.com/gpu") / kGpu;
      org_used[t.org] += u;
      used += u;
      INFO("team " << t.name << " uses " << u << " capability " << t.cap);
      if (t.cap > 0) CHECK(u <= t.cap);
    }
    for (const auto& [org, cap] : org_cap) {
      INFO("org " << org << " uses " << org_used[org] << " capability " << cap);
      if (cap > 0) CHECK(org_used[org] <= cap);
    }
    CHECK(used <= 64);
    if (used < 64) {
      // Idle GPUs: every team with work left is at its own or its organisation's capability.
      for (const auto& t : teams) {
        const int64_t u = cluster.RunningInQueue(t.name, "nvidia.com/gpu") / kGpu;
        if (u >= t.jobs) continue;
        const bool team_capped = t.cap > 0 && u >= t.cap;
        const bool org_capped = org_cap[t.org] > 0 && org_used[t.org] >= org_cap[t.org];
        INFO("idle GPUs " << 64 - used << ", team " << t.name << " has " << t.jobs - u
                          << " jobs waiting");
        CHECK((team_capped || org_capped));
        if (!(team_capped || org_capped)) {
          std::string msg;
          for (int j = 0; j < t.jobs; ++j) {
            const std::string id = fmt::format("ns/{}-{}", t.name, j);
            if (cluster.RunningPods(id) == 0) {
              msg = fmt::format("phase {} {}",
                                static_cast<int>(cluster.job(id).spec.podgroup_status.phase),
                                ConditionMessage(cluster, id));
              break;
            }
          }
          WARN("seed " << seed << " " << t.name << " u " << u << " jobs " << t.jobs << " pending "
                       << cluster.PendingJobsInQueue(t.name) << " : " << msg);
        }
      }
    }
  }
}

TEST_CASE("capacity: ancestorReclaimLevel must not be negative", "[sched][capacity]") {
  auto plugin = NewCapacityPlugin(testing::Args({{"ancestorReclaimLevel", "-1"}}));
  REQUIRE_FALSE(plugin.ok());
  CHECK_THAT(std::string(plugin.status().message()), Catch::Contains("ancestorReclaimLevel"));
}

}  // namespace
}  // namespace basalt::sched
