#include "scheduler/actions/gangreclaim/gangreclaim.h"

#include <catch2/catch.hpp>
#include <set>

#include "fmt/format.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

SchedulerConfig GangReclaimConfig(std::string action = "gangreclaim") {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back(std::move(action));
  return config;
}

MakeTask GpuPod() { return MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1); }

// Two nodes of 4 GPUs; queue "a" (weight 1) runs two rigid gangs of 4 on all 8 GPUs, queue "b"
// (weight 1) is empty.
void FillQueueA(FakeCluster& cluster, const SchedulerConfig& config, bool reclaimable = true) {
  cluster.AddQueue(MakeQueue("a").Weight(1).Reclaimable(reclaimable).Created(1));
  cluster.AddQueue(MakeQueue("b").Weight(1).Created(2));
  for (int n = 0; n < 2; ++n) {
    cluster.AddNode(
        MakeNode(fmt::format("n{}", n)).Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  }
  for (int j = 0; j < 2; ++j) {
    cluster.AddJob(MakeJob("ns", fmt::format("a-{}", j)).Queue("a").MinAvailable(4).Created(1 + j),
                   4, GpuPod());
  }
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningInQueue("a", "nvidia.com/gpu") == 8000);
}

void AddB(FakeCluster& cluster, int pods) {
  cluster.AddJob(MakeJob("ns", "b-0").Queue("b").MinAvailable(pods).Created(10), pods, GpuPod());
}

TEST_CASE("gangreclaim: a late queue takes back its share as one whole gang of the other queue",
          "[sched][gangreclaim]") {
  const SchedulerConfig config = GangReclaimConfig();
  FakeCluster cluster;
  FillQueueA(cluster, config);
  AddB(cluster, 4);
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.RunningPods("ns/b-0") == 4);
  CHECK(cluster.evictions() == 4);
  std::set<std::string> jobs;
  for (const auto& uid : cluster.evicted_uids()) jobs.insert(uid.substr(0, uid.rfind('/')));
  CHECK(jobs.size() == 1);  // one gang goes whole, the other keeps running
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 4000);
}

TEST_CASE("gangreclaim: the cause names the reclaimer", "[sched][gangreclaim]") {
  const SchedulerConfig config = GangReclaimConfig();
  FakeCluster cluster;
  FillQueueA(cluster, config);
  AddB(cluster, 4);
  bool seen = false;
  for (int i = 0; i < 5 && !seen; ++i) {
    REQUIRE(cluster.RunCycle(config).ok());
    for (const EvictionCause& c : cluster.last_evictions()) {
      seen = true;
      CHECK(c.Message() == "gangreclaim: making room for job ns/b-0 (queue b, priority 0)");
    }
  }
  CHECK(seen);
}

TEST_CASE("gangreclaim: a non-reclaimable queue keeps its gangs", "[sched][gangreclaim]") {
  const SchedulerConfig config = GangReclaimConfig();
  FakeCluster cluster;
  FillQueueA(cluster, config, /*reclaimable=*/false);
  AddB(cluster, 4);
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 8000);
}

TEST_CASE("gangreclaim: never below the victim queue's deserved share", "[sched][gangreclaim]") {
  const SchedulerConfig config = GangReclaimConfig();
  FakeCluster cluster;
  FillQueueA(cluster, config);
  // b's gang of 8 would need all of a's 8 GPUs; a deserves 4, so nothing is taken.
  AddB(cluster, 8);
  for (int i = 0; i < 5; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
  CHECK(cluster.RunningInQueue("a", "nvidia.com/gpu") == 8000);
}

}  // namespace
}  // namespace basalt::sched
