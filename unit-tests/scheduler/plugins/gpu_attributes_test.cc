// gpuattributes with the allocate action on pools A10 (23028 MiB), A30 (24576 MiB) and A100
// (81920 MiB), as GPU feature discovery labels them: memory and product requirements, the
// smallest sufficient GPU first, preferred products, node affinity on GFD labels, and the
// explanation of a requirement no node meets.
#include "scheduler/plugins/gpuattributes/gpu_attributes.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "common/api/gpu_attributes.h"
#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/conf.h"
#include "unit-tests/scheduler/testing/cycle.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

// binpack at weight 5 pulls towards the fullest node, which is what the plugin must outweigh.
const std::string kConfig =
    testing::SchedConfYaml("enqueue, allocate, backfill",
                           testing::PluginEntry("gpuattributes") +
                               "  - name: binpack\n    arguments:\n      binpack.weight: 5\n");

struct Cycle : testing::OneCycle {
  Cycle() : OneCycle(kConfig) {}
  // Pool (node name up to '-') of each bound pod whose name starts with `prefix`.
  std::multiset<std::string> PoolsOf(const std::string& prefix) const {
    std::multiset<std::string> out;
    for (const std::string& node : BoundNodes(prefix)) out.insert(node.substr(0, node.find('-')));
    return out;
  }
};

// Two nodes of 4 GPUs per pool; an A100 node with one GPU in use, so that binpack prefers it.
ClusterInfo Pools() {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  struct Pool {
    const char* name;
    const char* product;
    const char* family;
    const char* mib;
  };
  for (const Pool& p :
       {Pool{"a10", "NVIDIA-A10", "ampere", "23028"}, Pool{"a30", "NVIDIA-A30", "ampere", "24576"},
        Pool{"a100", "NVIDIA-A100-SXM4-80GB", "ampere", "81920"}}) {
    for (int i = 0; i < 2; ++i) {
      (void)c.AddNode(MakeNode(fmt::format("{}-{}", p.name, i))
                          .Allocatable("cpu", "32")
                          .Allocatable("memory", "128Gi")
                          .Allocatable("nvidia.com/gpu", 4)
                          .Label(std::string(api::kGfdProductLabel), p.product)
                          .Label(std::string(api::kGfdFamilyLabel), p.family)
                          .Label(std::string(api::kGfdMemoryLabel), p.mib)
                          .Label(std::string(api::kGfdCountLabel), "4"));
    }
  }
  (void)c.AddTask(MakeTask("other")
                      .Request("cpu", "16")
                      .Request("memory", "64Gi")
                      .Request("nvidia.com/gpu", 1)
                      .Node("a100-0")
                      .Status(TaskStatus::kRunning));
  return c;
}

std::shared_ptr<const api::GpuAttributes> Attrs(
    std::vector<std::pair<std::string, std::string>> annotations) {
  api::ParsedGpuAttributes parsed = api::ParseGpuAttributes(annotations);
  return std::make_shared<const api::GpuAttributes>(parsed.attributes);
}

// A job of `pods` single-GPU pods (minAvailable 1, so each pod places on its own).
void AddJob(ClusterInfo& c, const std::string& name, int pods,
            std::shared_ptr<const api::GpuAttributes> attrs,
            std::optional<std::vector<NodeSelectorTerm>> affinity = std::nullopt) {
  (void)c.AddJob(MakeJob("ns", name).MinAvailable(1));
  for (int i = 0; i < pods; ++i) {
    MakeTask b = MakeTask(fmt::format("{}-{}", name, i))
                     .Job(fmt::format("ns/{}", name))
                     .Request("cpu", "1")
                     .Request("nvidia.com/gpu", 1);
    if (affinity.has_value()) b.RequiredAffinity(*affinity);
    TaskInfo t = b;
    t.gpu_attributes = attrs;
    (void)c.AddTask(std::move(t));
  }
}

TEST_CASE("gpuattributes: a task needing 40Gi lands only on A100 nodes",
          "[sched][plugins][gpuattributes]") {
  ClusterInfo c = Pools();
  AddJob(c, "big", 4, Attrs({{"gpu.basalt.dev/min-memory", "40Gi"}}));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.PoolsOf("big") == std::multiset<std::string>{"a100", "a100", "a100", "a100"});
}

TEST_CASE("gpuattributes: 16Gi tasks take A10 then A30 while they have room, then A100",
          "[sched][plugins][gpuattributes]") {
  ClusterInfo c = Pools();
  AddJob(c, "mid", 19, Attrs({{"gpu.basalt.dev/min-memory", "16Gi"}}));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  const std::multiset<std::string> pools = cycle.PoolsOf("mid");
  CHECK(pools.count("a10") == 8);
  CHECK(pools.count("a30") == 8);
  CHECK(pools.count("a100") == 3);
}

TEST_CASE("gpuattributes: a GPU task without requirements is left to binpack (the used A100)",
          "[sched][plugins][gpuattributes]") {
  // The reference for the case above: the same cluster and pod without annotations is not
  // scored by the plugin, and binpack picks the A100 node that has a GPU in use.
  ClusterInfo c = Pools();
  AddJob(c, "mid", 1, nullptr);
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.PoolsOf("mid") == std::multiset<std::string>{"a100"});
}

TEST_CASE("gpuattributes: a required node affinity on nvidia.com/gpu.memory is scored too",
          "[sched][plugins][gpuattributes]") {
  ClusterInfo c = Pools();
  NodeSelectorTerm term;
  term.match_expressions.push_back(
      {std::string(api::kGfdMemoryLabel), NodeSelectorRequirement::Operator::kGt, {"16000"}});
  AddJob(c, "aff", 2, nullptr, std::vector<NodeSelectorTerm>{term});
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.PoolsOf("aff") == std::multiset<std::string>{"a10", "a10"});
}

TEST_CASE("gpuattributes: products and families filter, preferred products win among the rest",
          "[sched][plugins][gpuattributes]") {
  {
    ClusterInfo c = Pools();
    AddJob(c, "p", 2, Attrs({{"gpu.basalt.dev/products", "NVIDIA-A30, NVIDIA-A100-SXM4-80GB"}}));
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.PoolsOf("p") == std::multiset<std::string>{"a30", "a30"});
  }
  {
    ClusterInfo c = Pools();
    AddJob(c, "pref", 2,
           Attrs({{"gpu.basalt.dev/families", "ampere"},
                  {"gpu.basalt.dev/preferred-products", "NVIDIA-A100-SXM4-80GB"}}));
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.PoolsOf("pref") == std::multiset<std::string>{"a100", "a100"});
  }
  {
    ClusterInfo c = Pools();
    AddJob(c, "hopper", 1, Attrs({{"gpu.basalt.dev/families", "hopper"}}));
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.PoolsOf("hopper").empty());
    CHECK_THAT(cycle.Unschedulable("ns/hopper"),
               Catch::Contains("6 node(s) with a GPU family (nvidia.com/gpu.family) not in "
                               "gpu.basalt.dev/families: hopper"));
  }
}

TEST_CASE("gpuattributes: a requirement no node meets is explained with the attribute",
          "[sched][plugins][gpuattributes]") {
  ClusterInfo c = Pools();
  // A GPU node GPU feature discovery has not labelled.
  (void)c.AddNode(MakeNode("bare-0")
                      .Allocatable("cpu", "32")
                      .Allocatable("memory", "128Gi")
                      .Allocatable("nvidia.com/gpu", 4));
  AddJob(c, "huge", 1,
         Attrs({{"gpu.basalt.dev/min-memory", "100Gi"}, {"gpu.basalt.dev/max-memory", "120Gi"}}));
  AddJob(c, "tiny", 1, Attrs({{"gpu.basalt.dev/max-memory", "8Gi"}}));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.PoolsOf("huge").empty());
  const std::string huge = cycle.Unschedulable("ns/huge");
  CHECK_THAT(huge, Catch::Contains("6 node(s) with less GPU memory (nvidia.com/gpu.memory) than "
                                   "gpu.basalt.dev/min-memory: 100Gi"));
  CHECK_THAT(huge, Catch::Contains("1 node(s) without a nvidia.com/gpu.memory label "
                                   "(gpu.basalt.dev/min-memory)"));
  CHECK_THAT(cycle.Unschedulable("ns/tiny"),
             Catch::Contains("1 node(s) without a nvidia.com/gpu.memory label "
                             "(gpu.basalt.dev/max-memory)"));
  CHECK_THAT(cycle.Unschedulable("ns/tiny"),
             Catch::Contains("6 node(s) with more GPU memory (nvidia.com/gpu.memory) than "
                             "gpu.basalt.dev/max-memory: 8Gi"));
}

TEST_CASE("gpuattributes: a pod with an invalid annotation goes nowhere and says why",
          "[sched][plugins][gpuattributes]") {
  ClusterInfo c = Pools();
  AddJob(c, "bad", 1, Attrs({{"gpu.basalt.dev/min-memory", "16"}}));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  CHECK(cycle.PoolsOf("bad").empty());
  CHECK_THAT(cycle.Unschedulable("ns/bad"),
             Catch::Contains("invalid annotation gpu.basalt.dev/min-memory: invalid value \"16\""));
}

TEST_CASE("gpuattributes: arguments", "[sched][plugins][gpuattributes]") {
  auto with = [](std::string weight) {
    Arguments args;
    args.Set("gpuattributes.weight", std::move(weight));
    return NewGpuAttributesPlugin(args).ok();
  };
  CHECK(NewGpuAttributesPlugin(Arguments()).ok());
  CHECK(with("0"));
  CHECK_FALSE(with("-1"));
  CHECK_FALSE(with("x"));
}

}  // namespace
}  // namespace basalt::sched
