// sched_capacity_bench: one scheduling cycle (enqueue, allocate, backfill, reclaim) with the
// capacity plugin over a 3-level queue tree, against flat proportion with the same leaf queues
// (issue 14's measure): 10 organisations x 10 departments x 9 teams (1010 queues, jobs in the
// 900 leaves), N nodes, J gangs of P pods, all admitted and pending.
//
//   sched_capacity_bench [--nodes=5000 --jobs=5000 --pods=10 --reps=5]
// Prints per configuration: cycle ms p50 and p99 (nearest rank) and pods bound, then the ratio.

#include <algorithm>
#include <chrono>
#include <cmath>
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

using basalt::sched::ClusterInfo;
using basalt::sched::QueueInfo;
using basalt::sched::Resource;
using basalt::sched::TaskInfo;

using basalt::bench::CountingBinder;
using basalt::bench::kTreeDepts;
using basalt::bench::kTreeOrgs;
using basalt::bench::kTreeTeams;
using basalt::bench::TreeDept;
using basalt::bench::TreeLeaf;

ClusterInfo Build(int nodes, int jobs, int pods_per_job, bool tree) {
  ClusterInfo c;
  const int64_t total_cpu = int64_t{32000} * nodes;
  auto cpu = [](int64_t milli) {
    Resource r;
    r.SetMilliCpu(milli);
    return r;
  };
  if (tree) {
    for (int o = 0; o < kTreeOrgs; ++o) {
      QueueInfo org;
      org.name = "org-" + std::to_string(o);
      org.deserved = cpu(total_cpu / kTreeOrgs);
      org.capability = cpu(total_cpu / kTreeOrgs * 2);
      (void)c.AddQueue(org);
      for (int d = 0; d < kTreeDepts; ++d) {
        QueueInfo dept;
        dept.name = TreeDept(o, d);
        dept.parent = org.name;
        dept.deserved = cpu(total_cpu / kTreeOrgs / kTreeDepts);
        (void)c.AddQueue(dept);
      }
    }
  }
  const int leaves = kTreeOrgs * kTreeDepts * kTreeTeams;
  for (int i = 0; i < leaves; ++i) {
    QueueInfo q;
    q.name = TreeLeaf(i);
    q.weight = 1 + i % 4;
    if (tree) {
      q.parent = basalt::bench::TreeLeafParent(i);
      q.deserved = cpu(total_cpu / leaves);
    }
    (void)c.AddQueue(q);
  }
  for (int n = 0; n < nodes; ++n) {
    (void)c.AddNode(basalt::bench::GpuNode("node-" + std::to_string(n), 32000, 128, 8));
  }
  for (int j = 0; j < jobs; ++j) {
    auto job = basalt::bench::InqueueJob("job-" + std::to_string(j), TreeLeaf(j % leaves),
                                         pods_per_job, j);
    job.min_resources = Resource(1000, int64_t{2} << 30).Scale(pods_per_job, 1);
    (void)c.AddJob(std::move(job));
    for (int p = 0; p < pods_per_job; ++p) {
      TaskInfo t;
      t.name = "job-" + std::to_string(j) + "-worker-" + std::to_string(p);
      t.namespace_name = "bench";
      t.uid = "bench/" + t.name;
      t.job_id = "bench/job-" + std::to_string(j);
      t.resreq = Resource(1000, int64_t{2} << 30);
      t.init_resreq = t.resreq;
      (void)c.AddTask(std::move(t));
    }
  }
  return c;
}

basalt::sched::SchedulerConfig Config(bool tree) {
  const std::string fair =
      tree ? "  - name: capacity\n    enableHierarchy: true\n" : "  - name: proportion\n";
  const std::string yaml =
      "actions: \"enqueue, allocate, backfill, reclaim\"\n"
      "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
      "- plugins:\n  - name: drf\n  - name: predicates\n" +
      fair + "  - name: nodeorder\n";
  return basalt::bench::ConfigOrDie(yaml);
}

}  // namespace

int main(int argc, char** argv) {
  basalt::bench::CycleSize size{5000, 5000, 10, 5};
  basalt::FlagSet flags("sched_capacity_bench");
  size.AddFlags(flags);
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  const auto [nodes, jobs, pods, reps] = size;
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  std::printf("%d nodes, %d jobs x %d pods, %d repetitions\n", nodes, jobs, pods, reps);
  std::printf("%-28s %10s %10s %8s\n", "configuration", "p50_ms", "p99_ms", "bound");
  double p50[2] = {0, 0};
  double p99[2] = {0, 0};
  for (const bool tree : {false, true}) {
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
                tree ? "capacity, 3-level hierarchy" : "proportion, flat", p50[tree], p99[tree],
                static_cast<long long>(bound));
  }
  std::printf("ratio capacity/proportion: p50 %.2f, p99 %.2f\n", p50[1] / p50[0], p99[1] / p99[0]);
  return 0;
}
