// Admission that never strands resources (issue 14, Deliver 3): queues flooded while nodes are
// cordoned or gone settle at their weighted shares once the nodes are back, with no GPU idle
// while a queue has work that fits.

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "scheduler/conf/config.h"
#include "scheduler/plugins/proportion/proportion.h"
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

constexpr int kNodes = 16;  // 4 GPUs each: 64 GPUs
constexpr int64_t kGpu = 1000;

NodeInfo GpuNode(int i) {
  return MakeNode("n" + std::to_string(i))
      .Allocatable("cpu", "64")
      .Allocatable("memory", "256Gi")
      .Allocatable("nvidia.com/gpu", 4);
}

void AddOneGpuJobs(FakeCluster& cluster, const std::string& queue, int first, int count,
                   int created) {
  for (int j = first; j < first + count; ++j) {
    AddGpuGang(cluster, queue, queue + "-job" + std::to_string(j), 1, created);
  }
}

SchedulerConfig ConfigWithActions(const std::string& actions) {
  // The default configuration's tiers under other actions (its first line is the actions).
  const std::string_view defaults = DefaultSchedulerConfigYaml();
  const std::string yaml =
      fmt::format("actions: \"{}\"\n{}", actions, defaults.substr(defaults.find('\n') + 1));
  auto config = ParseSchedulerConfig(yaml);
  REQUIRE(config.ok());
  return *config;
}

// The cluster: queues q1 (weight 1, older) and q3 (weight 3), kNodes GPU nodes.
void AddWeightedQueuesAndNodes(FakeCluster& cluster) {
  cluster.AddQueue(MakeQueue("q1").Weight(1).Created(1));
  cluster.AddQueue(MakeQueue("q3").Weight(3).Created(2));
  for (int i = 0; i < kNodes; ++i) cluster.AddNode(GpuNode(i));
}

int64_t UsedGpus(const FakeCluster& cluster, const std::vector<std::string>& queues) {
  int64_t used = 0;
  for (const auto& q : queues) used += cluster.RunningInQueue(q, "nvidia.com/gpu");
  return used;
}

TEST_CASE("stranding: 1:3 queues flooded while every node is cordoned settle at 16 and 48 GPUs",
          "[sched][stranding]") {
  FakeCluster cluster;
  AddWeightedQueuesAndNodes(cluster);
  for (int i = 0; i < kNodes; ++i) cluster.SetNodeUnschedulable("n" + std::to_string(i), true);
  const SchedulerConfig config = DefaultSchedulerConfig();
  // The weight-1 queue's flood arrives first and is admitted while nothing can be placed; then
  // the weight-3 queue's.
  AddOneGpuJobs(cluster, "q1", 0, 60, 10);
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  AddOneGpuJobs(cluster, "q3", 0, 60, 20);
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  for (int i = 0; i < kNodes; ++i) cluster.SetNodeUnschedulable("n" + std::to_string(i), false);
  for (int c = 0; c < 6; ++c) REQUIRE(cluster.RunCycle(config).ok());

  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 16 * kGpu);
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 48 * kGpu);
  // And it stays there.
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 16 * kGpu);
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 48 * kGpu);
}

TEST_CASE("stranding: admitted PodGroups of a deleted queue do not hold back other queues",
          "[sched][stranding]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("q1").Weight(1).Created(1));
  for (int i = 0; i < kNodes; ++i) cluster.AddNode(GpuNode(i));
  // 70 Inqueue gangs of a queue that was deleted while its namespace is still terminating.
  for (int j = 0; j < 70; ++j) {
    cluster.AddJob(MakeJob("gone-ns", "left-" + std::to_string(j))
                       .Queue("deleted")
                       .MinAvailable(1)
                       .MinResources("nvidia.com/gpu", 1)
                       .Phase(PodGroupPhase::kInqueue)
                       .Created(0),
                   0, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  }
  AddOneGpuJobs(cluster, "q1", 0, 8, 10);
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(UsedGpus(cluster, {"q1"}) == 8 * kGpu);
}

// Pods deleted for good (kubectl delete pod, or the pod garbage collector after their node was
// deleted; no controller recreates them) leave admitted PodGroups without pods, which are
// readmitted first (they are the oldest). They must hold nothing: before the fix they kept
// their queue's share, so the other queue stayed at its own with 24 of 64 GPUs idle, and the
// queue's later jobs, whose pods exist, were never admitted.
TEST_CASE("stranding: PodGroups whose pods were deleted for good hold no GPU of anyone",
          "[sched][stranding]") {
  FakeCluster cluster;
  AddWeightedQueuesAndNodes(cluster);
  const SchedulerConfig config = ConfigWithActions("enqueue, allocate, backfill, reclaim");
  AddOneGpuJobs(cluster, "q1", 0, 60, 10);
  AddOneGpuJobs(cluster, "q3", 0, 48, 20);
  for (int c = 0; c < 6; ++c) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 16 * kGpu);
  REQUIRE(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 48 * kGpu);
  for (int j = 0; j < 24; ++j) cluster.DeletePodsForGood("ns/q3-job" + std::to_string(j));
  for (int c = 0; c < 6; ++c) REQUIRE(cluster.RunCycle(config).ok());
  // q1 takes what q3 no longer uses.
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 24 * kGpu);
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 40 * kGpu);
  // 12 more bare-pod gangs of q3, their pods created with their PodGroups: admitted and placed
  // (reclaim takes 12 of q1's 40: q3 deserves 36 of what it asks now, q1 28).
  for (int j = 48; j < 60; ++j) {
    const std::string name = "q3-job" + std::to_string(j);
    AddGpuGang(cluster, "q3", name, 1, 30, 0);
    AddGpuPod(cluster, name);
  }
  for (int c = 0; c < 10; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 36 * kGpu);
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 28 * kGpu);
}

// PodGroups admitted before their pods exist (hand-made, or a vcjob whose job controller is
// down) ask for nothing until their pods come: another queue may use the whole cluster
// meanwhile, and once the pods exist reclaim gives their queue its share back.
TEST_CASE("stranding: PodGroups without pods yet hold back no other queue", "[sched][stranding]") {
  FakeCluster cluster;
  AddWeightedQueuesAndNodes(cluster);
  const SchedulerConfig config = ConfigWithActions("enqueue, allocate, backfill, reclaim");
  for (int j = 0; j < 48; ++j) {
    AddGpuGang(cluster, "q3", "q3-job" + std::to_string(j), 1, 5, 0);
  }
  for (int c = 0; c < 2; ++c) REQUIRE(cluster.RunCycle(config).ok());
  AddOneGpuJobs(cluster, "q1", 0, 60, 10);
  for (int c = 0; c < 6; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 60 * kGpu);
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 0);
  // The pods come: q3 gets its 48 back through reclaim, q1 keeps its 16.
  for (int j = 0; j < 48; ++j) AddGpuPod(cluster, "q3-job" + std::to_string(j));
  for (int c = 0; c < 10; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 48 * kGpu);
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 16 * kGpu);
}

TEST_CASE("stranding: 1:3 queues on 6 GPUs get whole GPUs 2 and 4, not 1.5 and 4.5",
          "[sched][stranding]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("q1").Weight(1).Created(1));
  cluster.AddQueue(MakeQueue("q3").Weight(3).Created(2));
  cluster.AddNode(MakeNode("n0")
                      .Allocatable("cpu", "64")
                      .Allocatable("memory", "256Gi")
                      .Allocatable("nvidia.com/gpu", 6));
  AddOneGpuJobs(cluster, "q1", 0, 10, 10);
  AddOneGpuJobs(cluster, "q3", 0, 10, 20);
  for (int c = 0; c < 5; ++c) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  // 1.5 -> 2 and 4.5 -> 4 by largest remainder (ties go to the lighter queue's older share...):
  // what matters to the user is that all 6 GPUs run and the split is the nearest whole one.
  const int64_t q1 = cluster.RunningInQueue("q1", "nvidia.com/gpu");
  const int64_t q3 = cluster.RunningInQueue("q3", "nvidia.com/gpu");
  CHECK(q1 + q3 == 6 * kGpu);
  CHECK(q1 % kGpu == 0);
  CHECK(q1 >= 1 * kGpu);
  CHECK(q1 <= 2 * kGpu);
}

TEST_CASE("stranding: deserved GPUs are whole numbers by largest remainder summing to the total",
          "[sched][stranding][proportion]") {
  Resource total(64000, 1LL << 40);
  total.SetUnits("nvidia.com/gpu", 10);
  std::vector<QueueDemand> queues;
  for (const auto& [name, weight] : {std::pair<std::string, int>{"a", 1}, {"b", 1}, {"c", 1}}) {
    Resource request(10000, 1LL << 30);
    request.SetUnits("nvidia.com/gpu", 10);
    queues.push_back(QueueDemand{name, weight, request, Resource::Unbounded(), Resource()});
  }
  const auto deserved = ComputeDeserved(total, queues);
  int64_t sum = 0;
  for (const auto& [name, d] : deserved) {
    CHECK(d.Get("nvidia.com/gpu") % kGpu == 0);
    CHECK(d.Get("nvidia.com/gpu") >= 3 * kGpu);
    CHECK(d.Get("nvidia.com/gpu") <= 4 * kGpu);
    sum += d.Get("nvidia.com/gpu");
  }
  CHECK(sum == 10 * kGpu);
  // cpu stays exact (divisible), not rounded to whole cores.
  CHECK(deserved.at("a").milli_cpu() == 10000);
}

// One random history: queues with random weights (sometimes a capability) are flooded with
// 1-GPU jobs at random moments while nodes are cordoned, uncordoned, deleted and re-added in
// random order; then every node comes back and the scheduler runs until it settles.
struct History {
  std::vector<int> weights;
  std::vector<int> jobs;
  std::vector<int> capability;  // GPUs, 0 = none
};

History RunRandomHistory(unsigned seed, bool fixed_one_to_three, bool with_reclaim,
                         FakeCluster& cluster) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  History h;
  const int queues = fixed_one_to_three ? 2 : uniform(2, 4);
  for (int q = 0; q < queues; ++q) {
    h.weights.push_back(fixed_one_to_three ? (q == 0 ? 1 : 3) : uniform(1, 4));
    h.jobs.push_back(fixed_one_to_three ? 60 : uniform(5, 70));
    h.capability.push_back(!fixed_one_to_three && uniform(0, 3) == 0 ? uniform(4, 40) : 0);
    auto queue = MakeQueue("q" + std::to_string(q)).Weight(h.weights[q]).Created(q + 1);
    if (h.capability[q] > 0) queue.Capability("nvidia.com/gpu", h.capability[q]);
    cluster.AddQueue(queue);
  }
  for (int i = 0; i < kNodes; ++i) cluster.AddNode(GpuNode(i));
  const SchedulerConfig config = ConfigWithActions(
      with_reclaim ? "enqueue, allocate, reclaim, backfill" : "enqueue, allocate, backfill");
  std::vector<int> arrived(queues, 0);
  // The outage starts before any work arrives: the history is what happens during it.
  for (int i = 0; i < kNodes; ++i) {
    if (uniform(0, 1) == 0) {
      cluster.SetNodeUnschedulable("n" + std::to_string(i), true);
    } else {
      cluster.RemoveNode("n" + std::to_string(i));
    }
  }
  const int steps = uniform(10, 30);
  for (int s = 0; s < steps; ++s) {
    const int node = uniform(0, kNodes - 1);
    const std::string name = "n" + std::to_string(node);
    switch (uniform(0, 5)) {
      case 0:
      case 1: {  // a burst of arrivals
        const int q = uniform(0, queues - 1);
        const int n = std::min(h.jobs[q] - arrived[q], uniform(1, 30));
        AddOneGpuJobs(cluster, "q" + std::to_string(q), arrived[q], n, s + 10);
        arrived[q] += n;
        break;
      }
      case 2:
        if (cluster.HasNode(name)) cluster.SetNodeUnschedulable(name, uniform(0, 1) == 0);
        break;
      case 3:
        if (cluster.HasNode(name)) cluster.RemoveNode(name);
        break;
      case 4:
        if (!cluster.HasNode(name)) {
          cluster.AddNode(GpuNode(node));
          cluster.SetNodeUnschedulable(name, uniform(0, 1) == 0);
        }
        break;
      default:
        break;
    }
    REQUIRE(cluster.RunCycle(config).ok());
  }
  // The rest of the flood arrives before the cluster is back (in random queue order).
  std::vector<int> order(queues);
  for (int q = 0; q < queues; ++q) order[q] = q;
  std::shuffle(order.begin(), order.end(), rng);
  for (int q : order) {
    AddOneGpuJobs(cluster, "q" + std::to_string(q), arrived[q], h.jobs[q] - arrived[q], 100);
    REQUIRE(cluster.RunCycle(config).ok());
  }
  // The cluster comes back, node by node in random order.
  std::vector<int> nodes(kNodes);
  for (int i = 0; i < kNodes; ++i) nodes[i] = i;
  std::shuffle(nodes.begin(), nodes.end(), rng);
  for (int i : nodes) {
    const std::string name = "n" + std::to_string(i);
    if (!cluster.HasNode(name)) cluster.AddNode(GpuNode(i));
    cluster.SetNodeUnschedulable(name, false);
    if (uniform(0, 2) == 0) REQUIRE(cluster.RunCycle(config).ok());
  }
  for (int c = 0; c < 12; ++c) REQUIRE(cluster.RunCycle(config).ok());
  return h;
}

TEST_CASE("stranding: random histories of floods and node outages leave no GPU idle",
          "[sched][stranding][random]") {
  for (const bool with_reclaim : {false, true}) {
    for (unsigned seed = 1; seed <= 50; ++seed) {
      FakeCluster cluster;
      const History h = RunRandomHistory(seed, /*fixed_one_to_three=*/false, with_reclaim, cluster);
      std::vector<std::string> names;
      int64_t fitting_demand = 0;
      for (size_t q = 0; q < h.weights.size(); ++q) {
        names.push_back(fmt::format("q{}", q));
        fitting_demand += h.capability[q] > 0 ? std::min(h.jobs[q], h.capability[q]) : h.jobs[q];
      }
      INFO("seed " << seed << (with_reclaim ? " with reclaim" : ""));
      const int64_t used = UsedGpus(cluster, names);
      // No GPU idle while a queue has pending work that fits (every job is one GPU).
      CHECK(used == std::min<int64_t>(64, fitting_demand) * kGpu);
      for (size_t q = 0; q < h.weights.size(); ++q) {
        INFO("queue " << names[q] << " weight " << h.weights[q] << " jobs " << h.jobs[q]
                      << " capability " << h.capability[q]);
        if (h.capability[q] > 0) {
          CHECK(cluster.RunningInQueue(names[q], "nvidia.com/gpu") <= h.capability[q] * kGpu);
        }
      }
    }
  }
}

TEST_CASE("stranding: random histories with 1:3 weights on 64 GPUs always end at 16 and 48",
          "[sched][stranding][random]") {
  for (unsigned seed = 1; seed <= 50; ++seed) {
    FakeCluster cluster;
    // With reclaim: a queue that got GPUs while the other had no work yet gives them back.
    RunRandomHistory(seed, /*fixed_one_to_three=*/true, /*with_reclaim=*/true, cluster);
    INFO("seed " << seed);
    CHECK(cluster.RunningInQueue("q0", "nvidia.com/gpu") == 16 * kGpu);
    CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 48 * kGpu);
  }
}

// Tiny shares: more queues than gangs fit, so that most queues' deserved GPUs round below one
// gang (often to 0 or 1 of a 4-GPU gang). Gangs of G one-GPU pods, minAvailable G, arriving
// at once. Before the fix deserved was a hard ceiling per queue: whole clusters stayed idle.
struct TinyShares {
  int gpus = 0;
  std::vector<std::string> queues;
  std::vector<int> weights;
  std::vector<std::pair<std::string, int>> gangs;     // (job id, size)
  std::map<std::string, std::pair<int, int>> demand;  // queue -> (GPUs asked, largest gang)
};

TinyShares RunTinyShares(unsigned seed, bool with_reclaim, FakeCluster& cluster) {
  std::mt19937 rng(seed);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TinyShares t;
  const int nodes = uniform(1, 6);
  t.gpus = nodes * 4;
  for (int i = 0; i < nodes; ++i) cluster.AddNode(GpuNode(i));
  const int queues = uniform(t.gpus / 2 + 2, 3 * t.gpus);
  const int max_gang = std::min(8, t.gpus);
  const SchedulerConfig config = ConfigWithActions(
      with_reclaim ? "enqueue, allocate, reclaim, backfill" : "enqueue, allocate, backfill");
  for (int q = 0; q < queues; ++q) {
    const std::string name = fmt::format("t{}", q);
    t.queues.push_back(name);
    t.weights.push_back(uniform(1, 4));
    cluster.AddQueue(MakeQueue(name).Weight(t.weights.back()).Created(q + 1));
  }
  // An eviction restarts the whole gang (a Volcano Job's PodEvicted -> RestartJob policy).
  if (with_reclaim) cluster.SetEvictionGrace(1, /*restart_job=*/true);
  for (int q = 0; q < queues; ++q) {
    if (q != 0 && uniform(0, 2) != 0) continue;  // the first queue always has work
    for (int j = uniform(1, 2); j > 0; --j) {
      const int size = uniform(2, max_gang);
      const std::string job = fmt::format("{}-j{}", t.queues[q], j);
      cluster.AddJob(MakeJob("ns", job)
                         .Queue(t.queues[q])
                         .MinAvailable(size)
                         .MinResources("nvidia.com/gpu", size)
                         .Phase(PodGroupPhase::kPending)
                         .Created(q),
                     size, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
      t.gangs.emplace_back("ns/" + job, size);
      auto& [asked, largest] = t.demand[t.queues[q]];
      asked += size;
      largest = std::max(largest, size);
    }
  }
  for (int c = 0; c < 8; ++c) REQUIRE(cluster.RunCycle(config).ok());
  return t;
}

TEST_CASE("stranding: queues whose shares round below one gang still fill idle GPUs",
          "[sched][stranding][random]") {
  for (const bool with_reclaim : {false, true}) {
    for (unsigned seed = 1; seed <= 60; ++seed) {
      FakeCluster cluster;
      const TinyShares t = RunTinyShares(seed, with_reclaim, cluster);
      INFO("seed " << seed << (with_reclaim ? " with reclaim" : "") << ", " << t.gpus << " GPUs, "
                   << t.queues.size() << " queues, " << t.gangs.size() << " gangs");
      const int64_t idle = t.gpus * kGpu - UsedGpus(cluster, t.queues);
      CHECK(idle >= 0);
      // The deserved shares: the water-filling of what the queues ask for, as proportion
      // computes it.
      Resource total;
      total.SetUnits("nvidia.com/gpu", t.gpus);
      std::vector<QueueDemand> demands;
      for (size_t q = 0; q < t.queues.size(); ++q) {
        auto it = t.demand.find(t.queues[q]);
        if (it == t.demand.end()) continue;
        Resource request;
        request.SetUnits("nvidia.com/gpu", it->second.first);
        demands.push_back(
            QueueDemand{t.queues[q], t.weights[q], request, Resource::Unbounded(), Resource()});
      }
      const auto deserved = ComputeDeserved(total, demands);
      // No admitted gang of a queue under its deserved share (or holding nothing) waits while
      // it would fit in the idle GPUs; gangs are all or nothing. (Admission is the enqueue
      // plugins': admitted gangs that do not fit count against the idle cluster and the queue's
      // real capability, so a Pending gang may wait while they do.)
      int smallest_waiting = 1 << 20;
      int admitted = 0;
      for (const auto& [id, size] : t.gangs) {
        const int running = cluster.RunningPods(id);
        CHECK((running == 0 || running == size));
        if (cluster.job(id).spec.IsPending()) continue;
        ++admitted;
        const std::string& queue = cluster.job(id).spec.queue;
        const int64_t held = cluster.RunningInQueue(queue, "nvidia.com/gpu");
        const bool under = held == 0 || held < deserved.at(queue).Get("nvidia.com/gpu");
        if (running == 0 && under) smallest_waiting = std::min(smallest_waiting, size);
      }
      CHECK(admitted > 0);
      CHECK(idle < smallest_waiting * kGpu);
      // No queue runs more than one gang past its deserved share.
      for (const auto& [q, d] : deserved) {
        INFO("queue " << q << " deserved " << d.Get("nvidia.com/gpu") / kGpu << " asked "
                      << t.demand.at(q).first);
        CHECK(cluster.RunningInQueue(q, "nvidia.com/gpu") <=
              d.Get("nvidia.com/gpu") + t.demand.at(q).second * kGpu);
      }
    }
  }
}

}  // namespace
}  // namespace basalt::sched
