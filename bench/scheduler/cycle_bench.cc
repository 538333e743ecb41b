// sched_cycle_bench: times one scheduling cycle (enqueue, allocate, backfill with Volcano's
// default plugins) on synthetic clusters, in the spirit of the action-level benchmarks asked for
// in volcano#3244: N nodes, J gangs of P pods each, all admitted and pending.
//
//   sched_cycle_bench [--case=NODES,JOBS,PODS_PER_JOB]...
// Prints: nodes, jobs, pods, pods bound, cycle milliseconds, pods/s.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/flags.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"

namespace {

using basalt::sched::BindRequest;
using basalt::sched::ClusterInfo;
using basalt::sched::JobInfo;
using basalt::sched::NodeInfo;
using basalt::sched::QueueInfo;
using basalt::sched::Resource;
using basalt::sched::TaskInfo;

class CountingBinder final : public basalt::sched::Binder {
 public:
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    bound += static_cast<int64_t>(requests.size());
  }
  int64_t bound = 0;
};

ClusterInfo Build(int nodes, int jobs, int pods_per_job) {
  ClusterInfo c;
  for (int q = 0; q < 4; ++q) {
    QueueInfo queue;
    queue.name = "q" + std::to_string(q);
    queue.weight = q + 1;
    (void)c.AddQueue(queue);
  }
  for (int n = 0; n < nodes; ++n) {
    Resource alloc(32000, int64_t{128} << 30);
    alloc.SetUnits("nvidia.com/gpu", 8);
    NodeInfo node("node-" + std::to_string(n), alloc);
    node.labels()["zone"] = n % 2 == 0 ? "a" : "b";
    (void)c.AddNode(std::move(node));
  }
  for (int j = 0; j < jobs; ++j) {
    JobInfo job("bench", "job-" + std::to_string(j));
    job.queue = "q" + std::to_string(j % 4);
    job.min_available = pods_per_job;
    job.podgroup_status.phase = basalt::sched::PodGroupPhase::kInqueue;
    job.creation_time = basalt::sched::Timestamp{} + std::chrono::seconds(j);
    (void)c.AddJob(std::move(job));
    for (int p = 0; p < pods_per_job; ++p) {
      TaskInfo t;
      t.name = "job-" + std::to_string(j) + "-worker-" + std::to_string(p);
      t.namespace_name = "bench";
      t.uid = "bench/" + t.name;
      t.job_id = "bench/job-" + std::to_string(j);
      t.resreq = Resource(1000, int64_t{2} << 30);
      if (j % 3 == 0) t.resreq.SetUnits("nvidia.com/gpu", 1);
      t.init_resreq = t.resreq;
      (void)c.AddTask(std::move(t));
    }
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> case_flags;
  basalt::FlagSet flags("sched_cycle_bench");
  flags.StringArray("case", &case_flags, "NODES,JOBS,PODS (pods per job), repeatable");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  std::vector<std::vector<int>> cases;
  for (const std::string& c : case_flags)
    cases.push_back(basalt::bench::IntTupleOrExit("case", c, 3));
  if (cases.empty()) cases = {{100, 50, 10}, {1000, 500, 10}, {1000, 100, 100}};
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  const auto config = basalt::sched::DefaultSchedulerConfig();
  std::printf("%8s %8s %8s %8s %12s %10s\n", "nodes", "jobs", "pods", "bound", "cycle_ms",
              "pods/s");
  for (const auto& c : cases) {
    ClusterInfo snapshot = Build(c[0], c[1], c[2]);
    CountingBinder binder;
    basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr};
    auto start = std::chrono::steady_clock::now();
    absl::Status s = basalt::sched::RunCycle(std::move(snapshot), config, deps, "bench", {});
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) {
      std::fprintf(stderr, "cycle failed\n");
      return 1;
    }
    std::printf("%8d %8d %8d %8lld %12.1f %10.0f\n", c[0], c[1], c[1] * c[2],
                static_cast<long long>(binder.bound), ms, binder.bound / (ms / 1000.0));
  }
  return 0;
}
