#include "scheduler/actions/reclaim/reclaim.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

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
  cluster.AddJob(MakeJob("ns", "big")
                     .Queue("q2")
                     .MinAvailable(8)
                     .MinResources("nvidia.com/gpu", 8)
                     .Phase(PodGroupPhase::kPending)
                     .Created(100),
                 8, MakeTask("w").Request("cpu", "1").Request("nvidia.com/gpu", 1));

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
