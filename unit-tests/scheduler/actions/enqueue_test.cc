#include "scheduler/actions/enqueue/enqueue.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

NodeInfo GpuNode(const std::string& name) {
  return MakeNode(name)
      .Allocatable("cpu", "32")
      .Allocatable("memory", "128Gi")
      .Allocatable("nvidia.com/gpu", 4);
}

TEST_CASE("enqueue: queue capability of 8 GPUs holds the third 4-GPU job", "[sched][enqueue]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("team").Capability("nvidia.com/gpu", 8));
  for (int i = 1; i <= 4; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i)));
  for (int j = 1; j <= 3; ++j) {
    cluster.AddJob(MakeJob("ns", "job" + std::to_string(j))
                       .Queue("team")
                       .MinAvailable(4)
                       .MinResources("nvidia.com/gpu", 4)
                       .Phase(PodGroupPhase::kPending)
                       .Created(j),
                   4, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  }
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());

  CHECK(cluster.RunningInQueue("team", "nvidia.com/gpu") == 8000);
  CHECK(cluster.job("ns/job1").spec.podgroup_status.phase == PodGroupPhase::kRunning);
  CHECK(cluster.job("ns/job2").spec.podgroup_status.phase == PodGroupPhase::kRunning);
  const auto& held = cluster.job("ns/job3");
  CHECK(held.spec.podgroup_status.phase == PodGroupPhase::kPending);
  CHECK(held.pods.empty());
  const PodGroupCondition* cond = held.spec.podgroup_status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message,
             Catch::Contains("queue team resource quota insufficient") &&
                 Catch::Contains("insufficient nvidia.com/gpu (requested 4, allocated 8") &&
                 Catch::Contains("capability 8"));
}

TEST_CASE("enqueue: queues of weight 1 and 3 flooded with 1-GPU jobs settle at 4 and 12 GPUs",
          "[sched][enqueue][fairness]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("q1").Weight(1).Created(1));
  cluster.AddQueue(MakeQueue("q3").Weight(3).Created(2));
  for (int i = 1; i <= 4; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i)));
  // q1's jobs are all older, so an unfair admission would let q1 take the whole cluster.
  for (const auto& [queue, offset] : {std::pair<std::string, int>{"q1", 0}, {"q3", 100}}) {
    for (int j = 0; j < 20; ++j) {
      cluster.AddJob(MakeJob("ns", queue + "-job" + std::to_string(j))
                         .Queue(queue)
                         .MinResources("nvidia.com/gpu", 1)
                         .Phase(PodGroupPhase::kPending)
                         .Created(offset + j),
                     1, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
    }
  }
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 4000);
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 12000);
  // And it stays there.
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.RunningInQueue("q1", "nvidia.com/gpu") == 4000);
  CHECK(cluster.RunningInQueue("q3", "nvidia.com/gpu") == 12000);
}

TEST_CASE("enqueue: a job without minResources is admitted, a closed queue admits nothing",
          "[sched][enqueue]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("open"));
  cluster.AddQueue(MakeQueue("closed").State(QueueState::kClosed));
  cluster.AddNode(GpuNode("n1"));
  cluster.AddJob(MakeJob("ns", "free").Queue("open").Phase(PodGroupPhase::kPending), 1,
                 MakeTask("tmpl").Request("cpu", "1"));
  cluster.AddJob(
      MakeJob("ns", "shut").Queue("closed").MinResources("cpu", "1").Phase(PodGroupPhase::kPending),
      1, MakeTask("tmpl").Request("cpu", "1"));
  REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.job("ns/free").spec.podgroup_status.phase == PodGroupPhase::kInqueue);
  CHECK(cluster.job("ns/shut").spec.podgroup_status.phase == PodGroupPhase::kPending);
}

}  // namespace
}  // namespace basalt::sched
