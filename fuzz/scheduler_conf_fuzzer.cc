// fuzz_scheduler_conf: the scheduler configuration file (volcano-scheduler.conf YAML) on
// arbitrary text, through LoadSchedulerConfig with the in-tree plugin and action registries
// (parse, validate, build every plugin from its arguments), as vc-scheduler loads it.
//
// A config that loads is then used for three scheduling cycles on a small model cluster
// (FakeCluster from the scheduler's unit tests: GPU nodes, a queue hierarchy, gang jobs), so
// the plugins and actions run with the fuzzed arguments (weights, thresholds, flags).
// Invariants checked:
//  - no crash, no exception escapes, no undefined behaviour (the sanitizers check);
//  - every cycle with a loaded config succeeds;
//  - no node is given more GPUs than it has, and every running pod is on a node.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "fuzz/fuzz_check.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/builders.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace sched = basalt::sched;
using sched::testing::FakeCluster;
using sched::testing::MakeJob;
using sched::testing::MakeNode;
using sched::testing::MakeQueue;
using sched::testing::MakeTask;

namespace {

constexpr int kNodes = 3;
constexpr int kGpusPerNode = 4;

FakeCluster ModelCluster() {
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddQueue(MakeQueue("research").Weight(3).Capability("nvidia.com/gpu", 6));
  for (int i = 0; i < kNodes; ++i) {
    cluster.AddNode(MakeNode("n" + std::to_string(i))
                        .Allocatable("cpu", "32")
                        .Allocatable("memory", "128Gi")
                        .Allocatable("nvidia.com/gpu", kGpusPerNode));
  }
  for (int j = 0; j < 4; ++j) {
    cluster.AddJob(MakeJob("ns", "job" + std::to_string(j))
                       .Queue(j % 2 == 0 ? "default" : "research")
                       .MinAvailable(2)
                       .Priority(j)
                       .Created(j),
                   2 + j % 2,
                   MakeTask("tmpl")
                       .Request("cpu", "2")
                       .Request("memory", "4Gi")
                       .Request("nvidia.com/gpu", 1 + j % 2));
  }
  return cluster;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  static const sched::PluginRegistry plugins = sched::NewInTreeRegistry();
  static const sched::ActionRegistry actions = sched::NewInTreeActionRegistry();
  absl::StatusOr<sched::SchedulerConfig> config =
      sched::LoadSchedulerConfig(yaml, plugins, actions);
  if (!config.ok()) return 0;

  // The typed accessors the actions use.
  for (const auto& c : config->configurations) {
    for (const auto& [key, value] : c.arguments.values()) {
      (void)c.arguments.GetInt(key, 0);
      (void)c.arguments.GetFloat(key, 0);
      (void)c.arguments.GetBool(key, false);
    }
  }

  FakeCluster cluster = ModelCluster();
  for (int cycle = 0; cycle < 3; ++cycle) {
    absl::Status s = cluster.RunCycle(*config);
    FUZZ_CHECK(s.ok(),
               fmt::format("cycle {} with a config that loaded failed: {}", cycle, s.ToString()));
  }
  std::map<std::string, int64_t> gpus_milli;
  for (int j = 0; j < 4; ++j) {
    for (const auto& p : cluster.job("ns/job" + std::to_string(j)).pods) {
      if (p.status != sched::TaskStatus::kRunning) continue;
      FUZZ_CHECK(!p.node_name.empty(), fmt::format("running pod {} has no node", p.name));
      gpus_milli[p.node_name] += p.resreq.Get("nvidia.com/gpu");
    }
  }
  for (const auto& [node, milli] : gpus_milli) {
    FUZZ_CHECK(milli <= kGpusPerNode * 1000, fmt::format("node {} was given {} milli-GPUs of {}",
                                                         node, milli, kGpusPerNode * 1000));
  }
  return 0;
}
