// sched_hdrf_bench: one scheduling cycle (enqueue, allocate, backfill, reclaim) with hdrf (drf
// with enableHierarchy) over a 3-level queue tree, against flat drf + proportion with the same
// leaf queues (issue 14's measure): 10 organisations x 10 departments x 9 teams (1010 queues,
// jobs in the 900 leaves; weights 1-2, 1-3 and 1-4 by level), N nodes, J gangs of P pods (one
// cpu, 2Gi, one GPU each; nodes of 32 cpu, 128Gi, 16 GPUs, so that every pod fits), all
// admitted and pending.
//
//   sched_hdrf_bench [--nodes=5000 --jobs=5000 --pods=10 --reps=3] [--only=flat|hdrf]
// Prints per configuration: cycle ms p50 and p99 (nearest rank) and pods bound, then the ratio.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/flags.h"
#include "bench/scheduler/bench_cluster.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"

namespace {

using basalt::bench::CountingBinder;
using basalt::bench::kTreeDepts;
using basalt::bench::kTreeOrgs;
using basalt::bench::kTreeTeams;
using basalt::bench::TreeDept;
using basalt::bench::TreeLeaf;
using basalt::sched::ClusterInfo;
using basalt::sched::QueueInfo;
using basalt::sched::Resource;

ClusterInfo Build(int nodes, int jobs, int pods_per_job, bool tree) {
  ClusterInfo c;
  if (tree) {
    for (int o = 0; o < kTreeOrgs; ++o) {
      QueueInfo org;
      org.name = "org-" + std::to_string(o);
      org.weight = 1 + o % 2;
      (void)c.AddQueue(org);
      for (int d = 0; d < kTreeDepts; ++d) {
        QueueInfo dept;
        dept.name = TreeDept(o, d);
        dept.parent = org.name;
        dept.weight = 1 + d % 3;
        (void)c.AddQueue(dept);
      }
    }
  }
  const int leaves = kTreeOrgs * kTreeDepts * kTreeTeams;
  for (int i = 0; i < leaves; ++i) {
    QueueInfo q;
    q.name = TreeLeaf(i);
    q.weight = 1 + i % 4;
    if (tree) q.parent = basalt::bench::TreeLeafParent(i);
    (void)c.AddQueue(q);
  }
  for (int n = 0; n < nodes; ++n) {
    // Room for every pod: both configurations bind all.
    (void)c.AddNode(basalt::bench::GpuNode("node-" + std::to_string(n), 32000, 128, 16));
  }
  for (int j = 0; j < jobs; ++j) {
    const std::string name = "job-" + std::to_string(j);
    auto job = basalt::bench::InqueueJob(name, TreeLeaf(j % leaves), pods_per_job, j);
    Resource min = Resource(1000, int64_t{2} << 30);
    min.SetUnits("nvidia.com/gpu", 1);
    job.min_resources = min.Scale(pods_per_job, 1);
    (void)c.AddJob(std::move(job));
    for (int p = 0; p < pods_per_job; ++p) {
      const std::string pod = name + "-worker-" + std::to_string(p);
      (void)c.AddTask(basalt::bench::GpuTask(name, pod, "bench/" + pod));
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
  return basalt::bench::ConfigOrDie(yaml);
}

}  // namespace

int main(int argc, char** argv) {
  basalt::bench::CycleSize size{5000, 5000, 10, 3};
  std::string only;
  basalt::FlagSet flags("sched_hdrf_bench");
  size.AddFlags(flags);
  flags.String("only", &only, "run one configuration: flat or hdrf (default both)");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  const auto [nodes, jobs, pods, reps] = size;
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  std::printf("%d nodes, %d jobs x %d pods, %d repetitions\n", nodes, jobs, pods, reps);
  std::printf("%-28s %10s %10s %8s\n", "configuration", "p50_ms", "p99_ms", "bound");
  double p50[2] = {0, 0};
  double p99[2] = {0, 0};
  for (const bool tree : {false, true}) {
    if (!only.empty() && only != (tree ? "hdrf" : "flat")) continue;
    const auto config = Config(tree);
    std::vector<double> ms;
    int64_t bound = 0;
    for (int r = 0; r < reps; ++r) {
      ClusterInfo snapshot = Build(nodes, jobs, pods, tree);
      CountingBinder binder;
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr};
      ms.push_back(basalt::bench::TimedCycle(std::move(snapshot), config, deps));
      bound = binder.bound;
    }
    p50[tree] = basalt::bench::Percentile(ms, 0.5);
    p99[tree] = basalt::bench::Percentile(ms, 0.99);
    std::printf("%-28s %10.1f %10.1f %8lld\n",
                tree ? "hdrf, 3-level tree" : "drf + proportion, flat", p50[tree], p99[tree],
                static_cast<long long>(bound));
  }
  if (only.empty()) {
    std::printf("ratio hdrf/flat: p50 %.2f, p99 %.2f\n", p50[1] / p50[0], p99[1] / p99[0]);
  }
  return 0;
}
