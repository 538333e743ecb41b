#include "scheduler/plugins/binpack/binpack.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeNode;
using testing::MakeTask;

BinpackWeights Weights(std::map<std::string, std::string, std::less<>> args) {
  auto w = ParseBinpackWeights(Arguments(std::move(args)));
  REQUIRE(w.ok());
  return *w;
}

TEST_CASE("binpack: the reference worked example scores 50", "[sched][binpack]") {
  NodeInfo node = MakeNode("n1").Allocatable("cpu", "4").Allocatable("memory", "8Gi");
  TaskInfo existing = MakeTask("e")
                          .Request("cpu", "1")
                          .Request("memory", "2Gi")
                          .Node("n1")
                          .Status(TaskStatus::kRunning);
  REQUIRE(node.AddTask(&existing).ok());
  TaskInfo task = MakeTask("t").Request("cpu", "1").Request("memory", "2Gi");
  CHECK(BinpackScore(task, node, Weights({})) == Approx(50));
}

TEST_CASE("binpack: decimal weight, extra resources and overflow", "[sched][binpack]") {
  NodeInfo node = MakeNode("n1").Allocatable("cpu", "4").Allocatable("memory", "8Gi");
  TaskInfo existing = MakeTask("e")
                          .Request("cpu", "1")
                          .Request("memory", "2Gi")
                          .Node("n1")
                          .Status(TaskStatus::kRunning);
  REQUIRE(node.AddTask(&existing).ok());
  TaskInfo task = MakeTask("t").Request("cpu", "1").Request("memory", "2Gi");
  CHECK(BinpackScore(task, node, Weights({{"binpack.weight", "0.1"}})) == Approx(5));
  // cpu weight 3: (0.5*3 + 0.5*1) / 4 = 0.5 -> still 50.
  CHECK(BinpackScore(task, node, Weights({{"binpack.cpu", "3"}})) == Approx(50));

  NodeInfo gpu = MakeNode("g").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 4);
  TaskInfo half = MakeTask("h").Request("nvidia.com/gpu", 2).Node("g").Status(TaskStatus::kRunning);
  REQUIRE(gpu.AddTask(&half).ok());
  TaskInfo two = MakeTask("two").Request("nvidia.com/gpu", 2);
  // nvidia.com/gpu not configured: no dimension counts.
  CHECK(BinpackScore(two, gpu, Weights({})) == 0);
  auto with_gpu = Weights({{"binpack.resources", "nvidia.com/gpu"}});
  CHECK(BinpackScore(two, gpu, with_gpu) == Approx(100));
  TaskInfo three = MakeTask("three").Request("nvidia.com/gpu", 3);
  CHECK(BinpackScore(three, gpu, with_gpu) == 0);  // would overflow the node
  CHECK_FALSE(ParseBinpackWeights(testing::Args({{"binpack.cpu", "x"}})).ok());
}

}  // namespace
}  // namespace basalt::sched
