#include <catch2/catch.hpp>
#include <string>

#include "fmt/format.h"
#include "scheduler/conf/config.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

std::string Position(const FakeCluster& cluster, const std::string& job) {
  const PodGroupCondition* c =
      cluster.job(job).spec.podgroup_status.FindCondition(kConditionQueuePosition);
  return c == nullptr ? "" : c->message;
}

// A one-pod job that needs the whole two-GPU node, so that jobs of one queue wait one behind
// the other.
void AddWholeNodeJob(FakeCluster& cluster, const std::string& name, int created) {
  cluster.AddJob(MakeJob("ns", name)
                     .Queue("q1")
                     .MinAvailable(1)
                     .MinResources("nvidia.com/gpu", "2")
                     .Created(created),
                 1, MakeTask("t").Request("cpu", "1").Request("nvidia.com/gpu", 2));
}

TEST_CASE("Queue position: three waiting jobs of a full queue show 1/3, 2/3 and 3/3",
          "[sched][session]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 2));
  cluster.AddQueue(MakeQueue("q1"));
  for (int i = 0; i < 4; ++i) {
    AddWholeNodeJob(cluster, fmt::format("j{}", i), i);
  }
  const SchedulerConfig config = DefaultSchedulerConfig();
  // A cycle a second (T(cycle)); the last job is created at T(3): its position comes once its
  // PodGroup is kQueuePositionDelay old.
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(Position(cluster, "ns/j3").empty());  // too young yet
  for (int c = 3; c < 9; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(Position(cluster, "ns/j0").empty());  // running
  CHECK(Position(cluster, "ns/j1") == "1/3");
  CHECK(Position(cluster, "ns/j2") == "2/3");
  CHECK(Position(cluster, "ns/j3") == "3/3");
}

TEST_CASE("Queue position: a job placed within its first seconds is never given one",
          "[sched][session]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  cluster.AddQueue(MakeQueue("q1"));
  cluster.AddJob(MakeJob("ns", "quick").Queue("q1").MinAvailable(1).Created(0), 1,
                 MakeTask("t").Request("cpu", "1"));
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int c = 0; c < 8; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.job("ns/quick").spec.podgroup_status.phase == PodGroupPhase::kRunning);
  CHECK(cluster.job("ns/quick").spec.podgroup_status.FindCondition(kConditionQueuePosition) ==
        nullptr);
}

TEST_CASE("Queue position: a moved position is rewritten at most every refresh interval",
          "[sched][session]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 2));
  cluster.AddQueue(MakeQueue("q1"));
  auto add = [&](const std::string& name, int created) { AddWholeNodeJob(cluster, name, created); };
  add("j0", 0);
  add("j1", 0);
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int c = 0; c < 6; ++c) REQUIRE(cluster.RunCycle(config).ok());  // now T(6)
  REQUIRE(Position(cluster, "ns/j1") == "1/1");
  add("j2", 6);  // behind j1: j1's "1/1" becomes "1/2"
  for (int c = 6; c < 12; ++c) REQUIRE(cluster.RunCycle(config).ok());  // T(12)
  CHECK(Position(cluster, "ns/j1") == "1/1");  // written at T(5): not yet refreshed
  CHECK(Position(cluster, "ns/j2") == "2/2");  // its first position, at T(11)
  for (int c = 12; c < 16; ++c) REQUIRE(cluster.RunCycle(config).ok());  // T(16)
  CHECK(Position(cluster, "ns/j1") == "1/2");
}

TEST_CASE("Queue position: waiting jobs move up when the first completes", "[sched][session]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 2));
  cluster.AddQueue(MakeQueue("q1"));
  for (int i = 0; i < 4; ++i) {
    AddWholeNodeJob(cluster, fmt::format("j{}", i), i);
  }
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int c = 0; c < 9; ++c) REQUIRE(cluster.RunCycle(config).ok());
  cluster.SetPodsStatus("ns/j0", TaskStatus::kSucceeded);
  // j1 starts at once; the others' moved positions show within kQueuePositionRefresh.
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(Position(cluster, "ns/j1").empty());
  for (int c = 0; c < 9; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(Position(cluster, "ns/j1").empty());
  CHECK(Position(cluster, "ns/j2") == "1/2");
  CHECK(Position(cluster, "ns/j3") == "2/2");
}

TEST_CASE("Queue position: a queue that does not move writes nothing, cycle after cycle",
          "[sched][session]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 2));
  cluster.AddQueue(MakeQueue("q1"));
  for (int i = 0; i < 3; ++i) {
    AddWholeNodeJob(cluster, fmt::format("j{}", i), 0);
  }
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int c = 0; c < 6; ++c) REQUIRE(cluster.RunCycle(config).ok());  // positions from T(5)
  REQUIRE(Position(cluster, "ns/j2") == "2/2");
  // Past both the delay and the refresh interval: the positions are what they were, so neither
  // they nor anything else of the PodGroups is written again.
  for (int c = 6; c < 30; ++c) {
    REQUIRE(cluster.RunCycle(config).ok());
    INFO("cycle " << c + 1);
    CHECK(cluster.last_sink().podgroups.empty());
  }
}

}  // namespace
}  // namespace basalt::sched
