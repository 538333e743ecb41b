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
//   sched_task_topology_bench [nodes jobs workers_per_job reps]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/api/task_topology.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/framework/node_sampling.h"
#include "scheduler/plugins/registry.h"

namespace {

using basalt::sched::BindRequest;
using basalt::sched::ClusterInfo;
using basalt::sched::JobInfo;
using basalt::sched::NodeInfo;
using basalt::sched::QueueInfo;
using basalt::sched::Resource;
using basalt::sched::TaskInfo;

constexpr std::string_view kBase = R"(
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
)";
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
  QueueInfo queue;
  queue.name = "default";
  queue.weight = 1;
  (void)c.AddQueue(queue);
  for (int n = 0; n < nodes; ++n) {
    Resource alloc(64000, int64_t{512} << 30);
    alloc.SetUnits("nvidia.com/gpu", 8);
    (void)c.AddNode(NodeInfo("n-" + std::to_string(n), alloc));
  }
  for (int j = 0; j < jobs; ++j) {
    JobInfo job("bench", "job-" + std::to_string(j));
    job.queue = "default";
    job.min_available = workers + 1;
    job.podgroup_status.phase = basalt::sched::PodGroupPhase::kInqueue;
    job.creation_time = basalt::sched::Timestamp{} + std::chrono::seconds(j);
    if (!key.empty()) job.task_topology_annotations[std::string(key)] = std::string(value);
    (void)c.AddJob(std::move(job));
    for (int p = 0; p <= workers; ++p) {
      TaskInfo t;
      t.role = p == 0 ? "ps" : "worker";
      t.name = "job-" + std::to_string(j) + "-" + t.role + "-" + std::to_string(p == 0 ? 0 : p - 1);
      t.namespace_name = "bench";
      t.uid = t.name;
      t.job_id = "bench/job-" + std::to_string(j);
      t.resreq = Resource(1000, int64_t{2} << 30);
      t.resreq.SetUnits("nvidia.com/gpu", 1);
      t.init_resreq = t.resreq;
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
  int nodes = argc > 1 ? std::atoi(argv[1]) : 1000;
  int jobs = argc > 2 ? std::atoi(argv[2]) : 500;
  int workers = argc > 3 ? std::atoi(argv[3]) : 7;
  int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  auto off = basalt::sched::ParseSchedulerConfig(std::string(kBase));
  auto on = basalt::sched::ParseSchedulerConfig(std::string(kBase) + std::string(kTopology));
  if (!off.ok() || !on.ok()) {
    std::fprintf(stderr, "config: %s %s\n", off.status().ToString().c_str(),
                 on.status().ToString().c_str());
    return 1;
  }
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
      auto start = std::chrono::steady_clock::now();
      absl::Status s = basalt::sched::RunCycle(std::move(snapshot), modes[m].plugin ? *on : *off,
                                               deps, "bench", {});
      Run run;
      run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                   .count();
      if (!s.ok()) {
        std::fprintf(stderr, "cycle failed: %s\n", s.ToString().c_str());
        return 1;
      }
      run.bound = binder.bound;
      size_t sum = 0;
      for (const auto& [job, n] : binder.nodes) sum += n.size();
      run.nodes_per_job = binder.nodes.empty() ? 0 : double(sum) / double(binder.nodes.size());
      runs[m].push_back(run);
    }
  }
  auto median = [](std::vector<Run> v) {
    std::sort(v.begin(), v.end(), [](const Run& a, const Run& b) { return a.ms < b.ms; });
    return v[v.size() / 2];
  };
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
