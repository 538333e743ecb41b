// sched_hdrf_bench: one scheduling cycle (enqueue, allocate, backfill, reclaim) with hdrf (drf
// with enableHierarchy) over a 3-level queue tree, against flat drf + proportion with the same
// leaf queues (issue 14's measure): 10 organisations x 10 departments x 9 teams (1010 queues,
// jobs in the 900 leaves; weights 1-2, 1-3 and 1-4 by level), N nodes, J gangs of P pods (one
// cpu, 2Gi, one GPU each; nodes of 32 cpu, 128Gi, 16 GPUs, so that every pod fits), all
// admitted and pending.
//
//   sched_hdrf_bench [nodes jobs pods_per_job repetitions [flat|hdrf]]   (default: both)
// Prints per configuration: cycle ms p50 and p99 (nearest rank) and pods bound, then the ratio.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
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

constexpr int kOrgs = 10;
constexpr int kDepts = 10;
constexpr int kTeams = 9;

class CountingBinder final : public basalt::sched::Binder {
 public:
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    bound += static_cast<int64_t>(requests.size());
  }
  int64_t bound = 0;
};

std::string Leaf(int i) {
  const int org = i / (kDepts * kTeams);
  const int dept = (i / kTeams) % kDepts;
  return "team-" + std::to_string(org) + "-" + std::to_string(dept) + "-" +
         std::to_string(i % kTeams);
}

ClusterInfo Build(int nodes, int jobs, int pods_per_job, bool tree) {
  ClusterInfo c;
  if (tree) {
    for (int o = 0; o < kOrgs; ++o) {
      QueueInfo org;
      org.name = "org-" + std::to_string(o);
      org.weight = 1 + o % 2;
      (void)c.AddQueue(org);
      for (int d = 0; d < kDepts; ++d) {
        QueueInfo dept;
        dept.name = "dept-" + std::to_string(o) + "-" + std::to_string(d);
        dept.parent = org.name;
        dept.weight = 1 + d % 3;
        (void)c.AddQueue(dept);
      }
    }
  }
  const int leaves = kOrgs * kDepts * kTeams;
  for (int i = 0; i < leaves; ++i) {
    QueueInfo q;
    q.name = Leaf(i);
    q.weight = 1 + i % 4;
    if (tree) {
      const int org = i / (kDepts * kTeams);
      const int dept = (i / kTeams) % kDepts;
      q.parent = "dept-" + std::to_string(org) + "-" + std::to_string(dept);
    }
    (void)c.AddQueue(q);
  }
  for (int n = 0; n < nodes; ++n) {
    Resource alloc(32000, int64_t{128} << 30);
    alloc.SetUnits("nvidia.com/gpu", 16);  // room for every pod: both configurations bind all
    (void)c.AddNode(NodeInfo("node-" + std::to_string(n), alloc));
  }
  for (int j = 0; j < jobs; ++j) {
    JobInfo job("bench", "job-" + std::to_string(j));
    job.queue = Leaf(j % leaves);
    job.min_available = pods_per_job;
    Resource min = Resource(1000, int64_t{2} << 30);
    min.SetUnits("nvidia.com/gpu", 1);
    min = min.Scale(pods_per_job, 1);
    job.min_resources = min;
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
      t.resreq.SetUnits("nvidia.com/gpu", 1);
      t.init_resreq = t.resreq;
      (void)c.AddTask(std::move(t));
    }
  }
  return c;
}

basalt::sched::SchedulerConfig Config(bool tree) {
  // BENCH_PLAIN_DRF=1: the tree's queues with plain drf (no hierarchy, no proportion), to tell
  // hdrf's own cost from the rest of a cycle without proportion.
  const bool plain = std::getenv("BENCH_PLAIN_DRF") != nullptr;
  const std::string fair = tree ? (plain ? "  - name: drf\n  - name: predicates\n"
                                         : "  - name: drf\n    enableHierarchy: true\n  - name: "
                                           "predicates\n")
                                : "  - name: drf\n  - name: predicates\n  - name: proportion\n";
  const std::string yaml =
      "actions: \"enqueue, allocate, backfill, reclaim\"\n"
      "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
      "- plugins:\n" +
      fair + "  - name: nodeorder\n";
  auto config = basalt::sched::ParseSchedulerConfig(yaml);
  if (!config.ok()) {
    std::fprintf(stderr, "config: %s\n", std::string(config.status().message()).c_str());
    std::exit(1);
  }
  return *config;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int jobs = argc > 2 ? std::atoi(argv[2]) : 5000;
  const int pods = argc > 3 ? std::atoi(argv[3]) : 10;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  std::printf("%d nodes, %d jobs x %d pods, %d repetitions\n", nodes, jobs, pods, reps);
  std::printf("%-28s %10s %10s %8s\n", "configuration", "p50_ms", "p99_ms", "bound");
  double p50[2] = {0, 0};
  double p99[2] = {0, 0};
  const std::string only = argc > 5 ? argv[5] : "";
  for (const bool tree : {false, true}) {
    if (!only.empty() && only != (tree ? "hdrf" : "flat")) continue;
    const auto config = Config(tree);
    std::vector<double> ms;
    int64_t bound = 0;
    for (int r = 0; r < reps; ++r) {
      ClusterInfo snapshot = Build(nodes, jobs, pods, tree);
      CountingBinder binder;
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr};
      const auto start = std::chrono::steady_clock::now();
      absl::Status s = basalt::sched::RunCycle(std::move(snapshot), config, deps, "bench", {});
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      if (!s.ok()) {
        std::fprintf(stderr, "cycle failed: %s\n", std::string(s.message()).c_str());
        return 1;
      }
      bound = binder.bound;
    }
    p50[tree] = Percentile(ms, 0.5);
    p99[tree] = Percentile(ms, 0.99);
    std::printf("%-28s %10.1f %10.1f %8lld\n",
                tree ? "hdrf, 3-level tree" : "drf + proportion, flat", p50[tree], p99[tree],
                static_cast<long long>(bound));
  }
  if (only.empty()) {
    std::printf("ratio hdrf/flat: p50 %.2f, p99 %.2f\n", p50[1] / p50[0], p99[1] / p99[0]);
  }
  return 0;
}
