// sched_gpu_attributes_bench: the cost of the gpuattributes plugin. One scheduling cycle
// (enqueue, allocate, backfill; the default plugins) on N nodes in three GPU pools labelled as
// GPU feature discovery does (A10 23028 MiB, A30 24576 MiB, A100 81920 MiB; 8 GPUs each),
// J gangs of P single-GPU pods, run three ways:
//   off        the default plugins without gpuattributes, no annotations
//   on-plain   the default plugins with gpuattributes, no annotations (its cost when on by
//              default for users who do not use it)
//   on-attrs   with gpuattributes, every pod annotated: 2/3 min-memory 16Gi, 1/3 40Gi
//   off-selector  without gpuattributes, the 40Gi pods written the way users do without it:
//              nodeSelector nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB (16Gi pods: nothing)
//   off-all, on-attrs-all   the same as off and on-attrs with node sampling off
//              (--percentage-nodes-to-find=100): the plugin then sees every feasible node
// Each mode runs `reps` times in turn (interleaved), the median is printed with the ratio of
// cycle time against "off", and for on-attrs how many 16Gi pods took an A100.
//
//   sched_gpu_attributes_bench [--nodes=5000 --jobs=1000 --pods=8 --reps=3]
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/flags.h"
#include "bench/scheduler/bench_cluster.h"
#include "common/api/gpu_attributes.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/node_sampling.h"
#include "scheduler/plugins/registry.h"

namespace {

using basalt::sched::BindRequest;
using basalt::sched::ClusterInfo;
using basalt::sched::NodeInfo;
namespace bench = basalt::bench;

class Binder final : public basalt::sched::Binder {
 public:
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    for (const BindRequest& r : requests) nodes[r.task_uid] = r.node_name;
  }
  std::map<std::string, std::string> nodes;
};

std::string PoolOf(int n) { return n % 3 == 0 ? "a10" : n % 3 == 1 ? "a30" : "a100"; }

ClusterInfo Build(int nodes, int jobs, int pods_per_job, bool annotate, bool selector) {
  ClusterInfo c;
  bench::AddQueue(c, "default");
  for (int n = 0; n < nodes; ++n) {
    NodeInfo node = bench::GpuNode(PoolOf(n) + "-" + std::to_string(n), 64000, 512, 8);
    const std::string pool = PoolOf(n);
    node.labels()[std::string(basalt::api::kGfdProductLabel)] = pool == "a10" ? "NVIDIA-A10"
                                                                : pool == "a30"
                                                                    ? "NVIDIA-A30"
                                                                    : "NVIDIA-A100-SXM4-80GB";
    node.labels()[std::string(basalt::api::kGfdMemoryLabel)] = pool == "a10"   ? "23028"
                                                               : pool == "a30" ? "24576"
                                                                               : "81920";
    node.labels()[std::string(basalt::api::kGfdCountLabel)] = "8";
    (void)c.AddNode(std::move(node));
  }
  auto mid = std::make_shared<const basalt::api::GpuAttributes>(
      basalt::api::ParseGpuAttributes({{"gpu.basalt.dev/min-memory", "16Gi"}}).attributes);
  auto big = std::make_shared<const basalt::api::GpuAttributes>(
      basalt::api::ParseGpuAttributes({{"gpu.basalt.dev/min-memory", "40Gi"}}).attributes);
  for (int j = 0; j < jobs; ++j) {
    const std::string name = "job-" + std::to_string(j);
    (void)c.AddJob(bench::InqueueJob(name, "default", pods_per_job, j));
    for (int p = 0; p < pods_per_job; ++p) {
      const std::string task = name + "-worker-" + std::to_string(p);
      basalt::sched::TaskInfo t = bench::GpuTask(name, task, (j % 3 == 2 ? "big/" : "mid/") + task);
      if (annotate) t.gpu_attributes = j % 3 == 2 ? big : mid;
      if (selector && j % 3 == 2) {
        t.node_selector.Update([&](auto& m) {
          m[std::string(basalt::api::kGfdProductLabel)] = "NVIDIA-A100-SXM4-80GB";
        });
      }
      (void)c.AddTask(std::move(t));
    }
  }
  return c;
}

struct Run {
  double ms = 0;
  size_t bound = 0;
  size_t mid_on_a100 = 0;
};

}  // namespace

int main(int argc, char** argv) {
  basalt::bench::CycleSize size{5000, 1000, 8, 3};
  basalt::FlagSet flags("sched_gpu_attributes_bench");
  size.AddFlags(flags);
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  const auto [nodes, jobs, pods, reps] = size;
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  const auto off = bench::ConfigOrDie(bench::DefaultConfig());
  const auto on = bench::ConfigOrDie(bench::DefaultConfig("  - name: gpuattributes\n"));
  const char* names[] = {"off", "on-plain", "on-attrs", "off-all", "on-attrs-all", "off-selector"};
  constexpr int kModes = 6;
  std::vector<std::vector<Run>> runs(kModes);
  for (int r = 0; r < reps; ++r) {
    for (int m = 0; m < kModes; ++m) {
      const bool attrs = m == 2 || m == 4;
      ClusterInfo snapshot = Build(nodes, jobs, pods, attrs, m == 5);
      Binder binder;
      basalt::sched::NodeSamplingOptions sampling;
      if (m == 3 || m == 4) sampling.percentage_nodes_to_find = 100;
      basalt::sched::NodeSampler sampler(sampling);
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr, &sampler};
      Run run;
      run.ms = bench::TimedCycle(std::move(snapshot), m == 0 || m == 3 || m == 5 ? off : on, deps);
      run.bound = binder.nodes.size();
      for (const auto& [uid, node] : binder.nodes) {
        if (uid.rfind("mid/", 0) == 0 && node.rfind("a100-", 0) == 0) ++run.mid_on_a100;
      }
      runs[m].push_back(run);
    }
  }
  auto median = [](std::vector<Run> v) { return bench::MedianByMs(std::move(v)); };
  const Run base = median(runs[0]);
  std::printf("nodes=%d jobs=%d pods=%d reps=%d\n", nodes, jobs, jobs * pods, reps);
  std::printf("%10s %8s %12s %10s %10s %14s\n", "mode", "bound", "cycle_ms", "pods/s", "ms_ratio",
              "16Gi_on_A100");
  for (int m = 0; m < kModes; ++m) {
    const Run x = median(runs[m]);
    std::printf("%10s %8zu %12.1f %10.0f %10.3f %14zu\n", names[m], x.bound, x.ms,
                x.bound / (x.ms / 1000.0), x.ms / base.ms, x.mid_on_a100);
  }
  return 0;
}
