#include "scheduler/plugins/nodeorder/nodeorder.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeNode;
using testing::MakeTask;
using Op = NodeSelectorRequirement::Operator;

TEST_CASE("nodeorder: least/most requested and balanced allocation", "[sched][nodeorder]") {
  NodeInfo node = MakeNode("n").Allocatable("cpu", "4").Allocatable("memory", "8Gi");
  TaskInfo used = MakeTask("u")
                      .Request("cpu", "1")
                      .Request("memory", "2Gi")
                      .Node("n")
                      .Status(TaskStatus::kRunning);
  REQUIRE(node.AddTask(&used).ok());
  TaskInfo task = MakeTask("t").Request("cpu", "1").Request("memory", "2Gi");
  // After placement: cpu 2/4, memory 4/8 -> 50 each.
  CHECK(LeastRequestedScore(task, node) == 50);
  CHECK(MostRequestedScore(task, node) == 50);
  CHECK(BalancedAllocationScore(task, node) == 100);
  TaskInfo cpu_heavy = MakeTask("c").Request("cpu", "3").Request("memory", "0");
  // cpu 4/4 = 1.0, memory (2Gi + 200Mi default not applied to balanced) 2/8 = 0.25 -> std 0.375.
  CHECK(BalancedAllocationScore(cpu_heavy, node) == 62);
  // Least requested uses the non-zero default of 200Mi for the pod's memory.
  CHECK(LeastRequestedScore(cpu_heavy, node) == (0 + 72) / 2);
}

TEST_CASE("nodeorder: preferred affinity weights and PreferNoSchedule taints",
          "[sched][nodeorder]") {
  NodeInfo a =
      MakeNode("a").Label("zone", "a").WithTaint("spot", "", TaintEffect::kPreferNoSchedule);
  TaskInfo task = MakeTask("t")
                      .PreferredAffinity(10, {{{"zone", Op::kIn, {"a"}}}, {}})
                      .PreferredAffinity(5, {{{"zone", Op::kExists, {}}}, {}});
  CHECK(PreferredNodeAffinityWeight(task, a) == 15);
  CHECK(IntolerablePreferNoScheduleTaints(task, a) == 1);
  TaskInfo tolerant = MakeTask("t").Tolerate(
      {"spot", Toleration::Operator::kExists, "", TaintEffect::kPreferNoSchedule});
  CHECK(IntolerablePreferNoScheduleTaints(tolerant, a) == 0);
}

TEST_CASE("nodeorder: weights parse from arguments", "[sched][nodeorder]") {
  auto w = ParseNodeOrderWeights(
      testing::Args({{"leastrequested.weight", "0"}, {"mostrequested.weight", "2"}}));
  REQUIRE(w.ok());
  CHECK(w->least_requested == 0);
  CHECK(w->most_requested == 2);
  CHECK(w->taint_toleration == 3);
  CHECK(w->node_affinity == 2);
  CHECK_FALSE(ParseNodeOrderWeights(testing::Args({{"nodeaffinity.weight", "1.5"}})).ok());
}

}  // namespace
}  // namespace basalt::sched
