#include "scheduler/api/feasibility.h"

#include <catch2/catch.hpp>
#include <map>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

std::map<std::string, NodeInfo> TwoNodes() {
  std::map<std::string, NodeInfo> nodes;
  nodes.emplace("n1", MakeNode("n1").Allocatable("cpu", "32").Allocatable("nvidia.com/gpu", 8));
  nodes.emplace("n2", MakeNode("n2").Allocatable("cpu", "64").Allocatable("memory", "256Gi"));
  return nodes;
}

TaskInfo HugePod() {
  TaskInfo t = MakeTask("huge").Job("ns/huge").Build();
  t.resreq.SetMilliCpu(INT64_MAX).Set("nvidia.com/gpu", INT64_MAX);
  t.init_resreq = t.resreq;
  return t;
}

TEST_CASE("feasibility: the largest node and the total are taken per dimension",
          "[sched][feasibility]") {
  const ClusterLimits limits = ComputeClusterLimits(TwoNodes());
  CHECK(limits.nodes == 2);
  CHECK(limits.largest_node.milli_cpu() == 64000);
  CHECK(limits.largest_node.Get("nvidia.com/gpu") == 8000);
  CHECK(limits.largest_node.memory() == (int64_t{256} << 30));
  CHECK(limits.total.milli_cpu() == 96000);
}

TEST_CASE(
    "feasibility: a pod above every node's allocatable is explained with the request and "
    "the largest allocatable",
    "[sched][feasibility]") {
  const ClusterLimits limits = ComputeClusterLimits(TwoNodes());
  std::optional<std::string> why = TaskNeverFits(HugePod(), limits, nullptr);
  REQUIRE(why.has_value());
  CHECK(*why ==
        "pod ns/huge can never be scheduled: it requests cpu 9223372036854775807m or more, more "
        "than the largest allocatable of any node (64)");
  // 40 cpu fits on n2 even though it does not on n1; 8 GPUs fit on n1.
  CHECK_FALSE(TaskNeverFits(MakeTask("ok").Request("cpu", "40").Request("nvidia.com/gpu", 8),
                            limits, nullptr)
                  .has_value());
  std::optional<std::string> gpus =
      TaskNeverFits(MakeTask("g").Request("nvidia.com/gpu", 9), limits, nullptr);
  REQUIRE(gpus.has_value());
  CHECK_THAT(*gpus, Catch::Contains("requests nvidia.com/gpu 9") && Catch::Contains("(8)"));
  // A resource no node has at all.
  CHECK(TaskNeverFits(MakeTask("x").Request("example.com/fpga", 1), limits, nullptr).has_value());
  // With no node yet there is nothing to compare with: the pod just waits.
  CHECK_FALSE(TaskNeverFits(HugePod(), ClusterLimits{}, nullptr).has_value());
}

TEST_CASE("feasibility: a pod or a gang above its queue's capability by itself is explained",
          "[sched][feasibility]") {
  const ClusterLimits limits = ComputeClusterLimits(TwoNodes());
  const QueueInfo team = MakeQueue("team").Capability("nvidia.com/gpu", 4);
  std::optional<std::string> why =
      TaskNeverFits(MakeTask("p").Request("nvidia.com/gpu", 6), limits, &team);
  REQUIRE(why.has_value());
  CHECK(*why ==
        "pod ns/p can never be scheduled: it requests nvidia.com/gpu 6, more than the capability "
        "of queue team (4)");
  CHECK_FALSE(TaskNeverFits(MakeTask("p").Request("nvidia.com/gpu", 4), limits, &team));
  // cpu and memory <= 0 in a capability mean unlimited, as the proportion plugin reads them.
  CHECK_FALSE(CapabilityLimit(team, "cpu").has_value());
  CHECK(CapabilityLimit(team, "nvidia.com/gpu") == 4000);

  JobInfo gang = MakeJob("ns", "gang")
                     .Queue("team")
                     .MinResources("nvidia.com/gpu", 8)
                     .Phase(PodGroupPhase::kPending);
  MarkNeverFits(gang, limits, &team);
  CHECK(gang.never_fits ==
        "the gang can never be admitted: its minResources request nvidia.com/gpu 8, more than "
        "the capability of queue team (4)");

  JobInfo too_big = MakeJob("ns", "big").MinResources("cpu", "100").Phase(PodGroupPhase::kPending);
  MarkNeverFits(too_big, limits, nullptr);
  CHECK(too_big.never_fits ==
        "the gang can never be admitted: its minResources request cpu 100, more than all nodes "
        "can allocate together (96)");
  // minResources gate admission only: an admitted gang is judged by its pods.
  JobInfo admitted =
      MakeJob("ns", "admitted").MinResources("cpu", "100").Phase(PodGroupPhase::kRunning);
  MarkNeverFits(admitted, limits, nullptr);
  CHECK(admitted.never_fits.empty());
}

TEST_CASE("feasibility: a gang is impossible only when the tasks that may fit are too few",
          "[sched][feasibility]") {
  const ClusterLimits limits = ComputeClusterLimits(TwoNodes());
  JobInfo elastic = MakeJob("ns", "elastic").MinAvailable(1);
  elastic.AddTask(MakeTask("elastic-0").Job("ns/elastic").Request("cpu", "1"));
  TaskInfo huge_elastic = HugePod();
  huge_elastic.job_id = "ns/elastic";
  elastic.AddTask(huge_elastic);
  MarkNeverFits(elastic, limits, nullptr);
  CHECK(elastic.never_fit_tasks.size() == 1);
  CHECK(elastic.never_fit_tasks.count("uid-huge") == 1);
  CHECK(elastic.never_fits.empty());  // minAvailable 1: elastic-0 alone can run

  JobInfo gang = MakeJob("ns", "gang").MinAvailable(2);
  gang.AddTask(MakeTask("gang-0").Job("ns/gang").Request("cpu", "1"));
  TaskInfo huge = HugePod();
  huge.job_id = "ns/gang";
  gang.AddTask(huge);
  MarkNeverFits(gang, limits, nullptr);
  CHECK_THAT(gang.never_fits, Catch::StartsWith("pod ns/huge can never be scheduled"));

  // Recomputed from scratch: a larger node makes it feasible again.
  Resource everything;
  everything.SetMilliCpu(INT64_MAX).Set("nvidia.com/gpu", INT64_MAX);
  std::map<std::string, NodeInfo> nodes;
  nodes.emplace("big", NodeInfo("big", everything));
  MarkNeverFits(gang, ComputeClusterLimits(nodes), nullptr);
  CHECK(gang.never_fits.empty());
}

}  // namespace
}  // namespace basalt::sched
