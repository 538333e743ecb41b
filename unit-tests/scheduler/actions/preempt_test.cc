#include "scheduler/actions/preempt/preempt.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

TEST_CASE("preempt: a high-priority gang evicts just enough pods of a lower-priority elastic job",
          "[sched][preempt]") {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("preempt");
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  // Elastic low-priority job: 4 pods, minAvailable 1, so up to 3 may be preempted.
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(1).Created(1), 4,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  REQUIRE(cluster.RunningInQueue("default", "nvidia.com/gpu") == 4000);

  // Already admitted high-priority gang of 2 x 1 GPU.
  cluster.AddJob(MakeJob("ns", "high").Priority(10).MinAvailable(2).Created(2), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(10));
  for (int i = 0; i < 4; ++i) REQUIRE(cluster.RunCycle(config).ok());
  int high_running = 0;
  for (const auto& p : cluster.job("ns/high").pods)
    high_running += p.status == TaskStatus::kRunning;
  CHECK(high_running == 2);
  CHECK(cluster.evictions() == 2);
  int low_running = 0;
  for (const auto& p : cluster.job("ns/low").pods) low_running += p.status == TaskStatus::kRunning;
  CHECK(low_running == 2);
}

TEST_CASE("preempt: a victim gang is never broken below its minAvailable", "[sched][preempt]") {
  // As in Volcano, an empty victim set in tier 1 (gang refuses) passes the decision to tier 2,
  // where drf alone would allow the victim; the Helm default therefore turns drf's
  // enablePreemptable off, and so does this test.
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("preempt");
  for (auto& p : config.tiers[1].plugins) {
    if (p.name == "drf") p.flags["enablePreemptable"] = false;
  }
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 4));
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(4).Created(1), 4,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  cluster.AddJob(MakeJob("ns", "high").Priority(10).MinAvailable(1).Created(2), 1,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.evictions() == 0);
}

}  // namespace
}  // namespace basalt::sched
