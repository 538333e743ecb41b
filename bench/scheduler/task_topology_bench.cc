// sched_task_topology_bench: the cost and the effect of the task-topology plugin. One
// scheduling cycle (enqueue, allocate, backfill; the default plugins plus, when on,
// task-topology with weight 10) on N nodes of 8 GPUs, J jobs of 1 ps + W workers (1 GPU each),
// run four ways:
//   off          without task-topology; the jobs carry the affinity annotation "ps,worker"
//   on-plain     with task-topology, no annotations (its cost for users who do not use it)
//   on-affinity  with task-topology, every job annotated affinity "ps,worker"
//   on-anti      with task-topology, every job annotated anti-affinity "worker"
//   off-all, on-aff-all   off and on-affinity with node sampling off
//                (--percentage-nodes-to-find=100): every task then sees every feasible node,
//                including the one its ps went to
// Each mode runs `reps` times in turn (interleaved); the median cycle is printed with its ratio
// against "off", and the mean number of distinct nodes a job's pods landed on.
//
//   sched_task_topology_bench [--nodes=1000 --jobs=500 --workers=7 --reps=3]
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/common/flags.h"
#include "bench/scheduler/bench_cluster.h"
#include "common/api/task_topology.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/node_sampling.h"
#include "scheduler/plugins/registry.h"

namespace {

using basalt::sched::BindRequest;
using basalt::sched::ClusterInfo;
namespace bench = basalt::bench;

constexpr std::string_view kTopology = R"(  - name: task-topology
    arguments:
      task-topology.weight: 10
)";

class Binder final : public basalt::sched::Binder {
 public:
  void Bind(const std::string& job, std::vector<BindRequest> requests) override {
    for (const BindRequest& r : requests) {
      nodes[job].insert(r.node_name);
      ++bound;
    }
  }
  std::map<std::string, std::set<std::string>> nodes;  // job -> nodes of its pods
  size_t bound = 0;
};

ClusterInfo Build(int nodes, int jobs, int workers, std::string_view key, std::string_view value) {
  ClusterInfo c;
  bench::AddQueue(c, "default");
  for (int n = 0; n < nodes; ++n)
    (void)c.AddNode(bench::GpuNode("n-" + std::to_string(n), 64000, 512, 8));
  for (int j = 0; j < jobs; ++j) {
    const std::string name = "job-" + std::to_string(j);
    basalt::sched::JobInfo job = bench::InqueueJob(name, "default", workers + 1, j);
    if (!key.empty()) job.task_topology_annotations[std::string(key)] = std::string(value);
    (void)c.AddJob(std::move(job));
    for (int p = 0; p <= workers; ++p) {
      const std::string role = p == 0 ? "ps" : "worker";
      const std::string task = name + "-" + role + "-" + std::to_string(p == 0 ? 0 : p - 1);
      basalt::sched::TaskInfo t = bench::GpuTask(name, task, task);
      t.role = role;
      (void)c.AddTask(std::move(t));
    }
  }
  return c;
}

struct Run {
  double ms = 0;
  size_t bound = 0;
  double nodes_per_job = 0;
};

}  // namespace

int main(int argc, char** argv) {
  basalt::bench::CycleSize size{1000, 500, 7, 3};
  basalt::FlagSet flags("sched_task_topology_bench");
  size.AddFlags(flags, "workers", "workers per job");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  const auto [nodes, jobs, workers, reps] = size;
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  const auto off = bench::ConfigOrDie(bench::DefaultConfig());
  const auto on = bench::ConfigOrDie(bench::DefaultConfig("", kTopology));
  struct Mode {
    const char* name;
    bool plugin;
    std::string_view key;
    std::string_view value;
    bool all_nodes = false;
  };
  const Mode modes[] = {
      {"off", false, basalt::api::kTaskTopologyAffinityKey, "ps,worker"},
      {"on-plain", true, "", ""},
      {"on-affinity", true, basalt::api::kTaskTopologyAffinityKey, "ps,worker"},
      {"on-anti", true, basalt::api::kTaskTopologyAntiAffinityKey, "worker"},
      {"off-all", false, basalt::api::kTaskTopologyAffinityKey, "ps,worker", true},
      {"on-aff-all", true, basalt::api::kTaskTopologyAffinityKey, "ps,worker", true}};
  constexpr int kModes = 6;
  std::vector<std::vector<Run>> runs(kModes);
  for (int r = 0; r < reps; ++r) {
    for (int m = 0; m < kModes; ++m) {
      ClusterInfo snapshot = Build(nodes, jobs, workers, modes[m].key, modes[m].value);
      Binder binder;
      basalt::sched::NodeSamplingOptions sampling;
      if (modes[m].all_nodes) sampling.percentage_nodes_to_find = 100;
      basalt::sched::NodeSampler sampler(sampling);
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr, &sampler};
      Run run;
      run.ms = bench::TimedCycle(std::move(snapshot), modes[m].plugin ? on : off, deps);
      run.bound = binder.bound;
      size_t sum = 0;
      for (const auto& [job, n] : binder.nodes) sum += n.size();
      run.nodes_per_job = binder.nodes.empty() ? 0 : double(sum) / double(binder.nodes.size());
      runs[m].push_back(run);
    }
  }
  auto median = [](std::vector<Run> v) { return bench::MedianByMs(std::move(v)); };
  const Run base = median(runs[0]);
  std::printf("nodes=%d jobs=%d pods=%d reps=%d\n", nodes, jobs, jobs * (workers + 1), reps);
  std::printf("%12s %8s %12s %10s %10s %14s\n", "mode", "bound", "cycle_ms", "pods/s", "ms_ratio",
              "nodes_per_job");
  for (int m = 0; m < kModes; ++m) {
    const Run x = median(runs[m]);
    std::printf("%12s %8zu %12.1f %10.0f %10.3f %14.2f\n", modes[m].name, x.bound, x.ms,
                x.bound / (x.ms / 1000.0), x.ms / base.ms, x.nodes_per_job);
  }
  return 0;
}
