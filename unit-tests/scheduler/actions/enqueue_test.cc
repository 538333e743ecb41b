#include "scheduler/actions/enqueue/enqueue.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/fakes.h"
#include "unit-tests/scheduler/testing/gangs.h"

namespace basalt::sched {
namespace {

using testing::AddGpuGang;
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
  // No minResources does not get a job past a closed queue, nor past one that does not exist.
  cluster.AddJob(MakeJob("ns", "shut-free").Queue("closed").Phase(PodGroupPhase::kPending), 1,
                 MakeTask("tmpl").Request("cpu", "1"));
  cluster.AddJob(MakeJob("ns", "lost").Queue("gone").Phase(PodGroupPhase::kPending), 1,
                 MakeTask("tmpl").Request("cpu", "1"));
  REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.job("ns/free").spec.podgroup_status.phase == PodGroupPhase::kInqueue);
  for (const char* name : {"ns/shut", "ns/shut-free", "ns/lost"}) {
    INFO(name);
    const auto& job = cluster.job(name);
    CHECK(job.spec.podgroup_status.phase == PodGroupPhase::kPending);
    CHECK(job.pods.empty());
    // The reason is the queue, not the nodes.
    const PodGroupCondition* cond = job.spec.podgroup_status.FindCondition("Unschedulable");
    REQUIRE(cond != nullptr);
    CHECK_THAT(cond->message,
               std::string(name) == "ns/lost"
                   ? Catch::Contains("queue gone does not exist")
                   : Catch::Contains("queue closed is Closed: it admits no new jobs"));
  }
}

// Issue 11, defect 2: 2^63-1 (what the API's "9223372036854775807" is clamped to), in milli-units.
constexpr const char* kHugeMilli = "9223372036854775807m";

TEST_CASE(
    "enqueue: a gang whose minResources exceed every node together is explained and does "
    "not hold the other gangs of its queue",
    "[sched][enqueue][feasibility]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("team"));
  for (int i = 1; i <= 4; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i)));
  // The oldest job of the queue, so it is first in every ordering.
  cluster.AddJob(MakeJob("ns", "huge")
                     .Queue("team")
                     .MinResources("cpu", kHugeMilli)
                     .MinResources("nvidia.com/gpu", kHugeMilli)
                     .Phase(PodGroupPhase::kPending)
                     .Created(0),
                 1,
                 MakeTask("tmpl").Request("cpu", kHugeMilli).Request("nvidia.com/gpu", kHugeMilli));
  for (int j = 1; j <= 2; ++j) {
    cluster.AddJob(MakeJob("ns", "job" + std::to_string(j))
                       .Queue("team")
                       .MinAvailable(4)
                       .MinResources("cpu", "4")
                       .MinResources("nvidia.com/gpu", 4)
                       .Phase(PodGroupPhase::kPending)
                       .Created(j),
                   4, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  }
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());

  CHECK(cluster.job("ns/job1").spec.podgroup_status.phase == PodGroupPhase::kRunning);
  CHECK(cluster.job("ns/job2").spec.podgroup_status.phase == PodGroupPhase::kRunning);
  CHECK(cluster.RunningInQueue("team", "nvidia.com/gpu") == 8000);
  const auto& huge = cluster.job("ns/huge");
  CHECK(huge.spec.podgroup_status.phase == PodGroupPhase::kPending);
  CHECK(huge.pods.empty());
  const PodGroupCondition* cond = huge.spec.podgroup_status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK(cond->status == "True");
  CHECK_THAT(cond->message,
             Catch::Contains("the gang can never be admitted: its minResources request cpu "
                             "9223372036854775807m or more, more than all nodes can allocate "
                             "together (128)"));
}

TEST_CASE(
    "enqueue: a gang above its queue's capability by itself is explained and the queue's "
    "other gangs are admitted",
    "[sched][enqueue][feasibility]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("team").Capability("nvidia.com/gpu", 8));
  for (int i = 1; i <= 4; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i)));
  AddGpuGang(cluster, "team", "big", 12, 0);
  for (int j = 1; j <= 2; ++j) AddGpuGang(cluster, "team", "job" + std::to_string(j), 4, j);
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.RunningInQueue("team", "nvidia.com/gpu") == 8000);
  const PodGroupCondition* cond =
      cluster.job("ns/big").spec.podgroup_status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message,
             Catch::Contains("its minResources request nvidia.com/gpu 12, more than the capability "
                             "of queue team (8)"));
}

TEST_CASE("enqueue: a gang that can never run takes no fair share from the other queues",
          "[sched][enqueue][fairness][feasibility]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("qa").Weight(1).Created(1));
  cluster.AddQueue(MakeQueue("qb").Weight(1).Created(2));
  for (int i = 1; i <= 4; ++i) cluster.AddNode(GpuNode("n" + std::to_string(i)));
  cluster.AddJob(MakeJob("ns", "a-small")
                     .Queue("qa")
                     .MinResources("nvidia.com/gpu", 1)
                     .Phase(PodGroupPhase::kPending),
                 1, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  // 1000 GPUs in a 16-GPU cluster: were it demand, qa would deserve half the cluster.
  cluster.AddJob(MakeJob("ns", "a-huge")
                     .Queue("qa")
                     .MinResources("nvidia.com/gpu", 1000)
                     .Phase(PodGroupPhase::kPending),
                 1, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1000));
  for (int j = 0; j < 20; ++j) {
    cluster.AddJob(MakeJob("ns", "b-job" + std::to_string(j))
                       .Queue("qb")
                       .MinResources("nvidia.com/gpu", 1)
                       .Phase(PodGroupPhase::kPending)
                       .Created(100 + j),
                   1, MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  }
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.RunningInQueue("qa", "nvidia.com/gpu") == 1000);
  CHECK(cluster.RunningInQueue("qb", "nvidia.com/gpu") == 15000);
  CHECK(cluster.job("ns/a-huge").spec.podgroup_status.phase == PodGroupPhase::kPending);
}

}  // namespace
TEST_CASE(
    "enqueue: a bare pod's PodGroup waits for its pod and is then admitted, placed and "
    "written once, a vcjob's PodGroup is admitted before its pods",
    "[sched][enqueue]") {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(GpuNode("n1"));
  // The podgroup controller's PodGroup for a bare pod, seen before the pod's group annotation:
  // no pods yet (replicas 0: no job controller creates them).
  cluster.AddJob(MakeJob("ns", "podgroup-p1")
                     .PodsPrecedeGroup()
                     .MinResources("cpu", "1")
                     .Phase(PodGroupPhase::kPending)
                     .Created(1),
                 0, MakeTask("unused"));
  // A vcjob's PodGroup: its job controller creates the pods once it is Inqueue.
  cluster.AddJob(
      MakeJob("ns", "vcjob").MinResources("cpu", "1").Phase(PodGroupPhase::kPending).Created(2), 1,
      MakeTask("tmpl").Request("cpu", "1"));
  // minMember 0: nothing to wait for, admitted as before.
  cluster.AddJob(MakeJob("ns", "podgroup-zero")
                     .PodsPrecedeGroup()
                     .MinAvailable(0)
                     .Phase(PodGroupPhase::kPending)
                     .Created(3),
                 0, MakeTask("unused"));

  REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.job("ns/podgroup-p1").spec.podgroup_status.phase == PodGroupPhase::kPending);
  CHECK(cluster.PodGroupWrites("ns/podgroup-p1") == 0);
  CHECK(cluster.job("ns/vcjob").spec.podgroup_status.phase == PodGroupPhase::kInqueue);
  CHECK(cluster.job("ns/podgroup-zero").spec.podgroup_status.phase == PodGroupPhase::kInqueue);

  // The pod's annotation arrives: admitted and placed in one cycle, one status write.
  cluster.AddPodToJob("ns/podgroup-p1", MakeTask("p1").Request("cpu", "1"));
  REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.job("ns/podgroup-p1").spec.podgroup_status.phase == PodGroupPhase::kRunning);
  CHECK(cluster.PodGroupWrites("ns/podgroup-p1") == 1);
  CHECK(cluster.RunningPods("ns/podgroup-p1") == 1);
  // The vcjob's pod, created after admission, runs too.
  REQUIRE(cluster.RunCycle(DefaultSchedulerConfig()).ok());
  CHECK(cluster.RunningPods("ns/vcjob") == 1);
}

}  // namespace basalt::sched
