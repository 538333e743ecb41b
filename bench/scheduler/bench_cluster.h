#pragma once
// Shared set-up of the in-process scheduler benches (sched_*_bench): the default plugin
// configuration, GPU nodes, queues, Inqueue gangs of 1-GPU pods, one timed cycle and the median
// of interleaved runs. Header-only; benches only (no error handling beyond "print and exit").

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"

namespace basalt::bench {

// Volcano's default plugins (enqueue, allocate, backfill), with `first_in_tier2` placed before
// predicates (e.g. a filtering plugin) and `last_in_tier2` after nodeorder; each is YAML plugin
// entries indented as "  - name: x\n", or empty.
inline std::string DefaultConfig(std::string_view first_in_tier2 = "",
                                 std::string_view last_in_tier2 = "") {
  std::string out = R"(
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
)";
  out += first_in_tier2;
  out += R"(  - name: predicates
  - name: proportion
  - name: nodeorder
)";
  out += last_in_tier2;
  return out;
}

// Parses `yaml` or exits with the parse error.
inline sched::SchedulerConfig ConfigOrDie(const std::string& yaml) {
  auto config = sched::ParseSchedulerConfig(yaml);
  if (!config.ok()) {
    std::fprintf(stderr, "config: %s\n", config.status().ToString().c_str());
    std::exit(1);
  }
  return *config;
}

inline void AddQueue(sched::ClusterInfo& c, std::string name, int32_t weight = 1) {
  sched::QueueInfo queue;
  queue.name = std::move(name);
  queue.weight = weight;
  (void)c.AddQueue(queue);
}

inline sched::NodeInfo GpuNode(std::string name, int64_t milli_cpu, int64_t memory_gib,
                               int64_t gpus) {
  sched::Resource alloc(milli_cpu, memory_gib << 30);
  alloc.SetUnits("nvidia.com/gpu", gpus);
  return sched::NodeInfo(std::move(name), alloc);
}

// An admitted (Inqueue) PodGroup bench/<name>, created `created_s` seconds after the epoch.
inline sched::JobInfo InqueueJob(std::string name, std::string queue, int32_t min_available,
                                 int created_s) {
  sched::JobInfo job("bench", std::move(name));
  job.queue = std::move(queue);
  job.min_available = min_available;
  job.podgroup_status.phase = sched::PodGroupPhase::kInqueue;
  job.creation_time = sched::Timestamp{} + std::chrono::seconds(created_s);
  return job;
}

// A pending pod of job bench/<job> requesting 1 CPU, 2 GiB and `gpus` nvidia.com/gpu.
inline sched::TaskInfo GpuTask(const std::string& job, std::string name, std::string uid,
                               int64_t gpus = 1) {
  sched::TaskInfo t;
  t.name = std::move(name);
  t.namespace_name = "bench";
  t.uid = std::move(uid);
  t.job_id = "bench/" + job;
  t.resreq = sched::Resource(1000, int64_t{2} << 30);
  t.resreq.SetUnits("nvidia.com/gpu", gpus);
  t.init_resreq = t.resreq;
  return t;
}

// Runs one cycle on `snapshot` and returns its wall time in milliseconds; exits if it fails.
inline double TimedCycle(sched::ClusterInfo snapshot, const sched::SchedulerConfig& config,
                         const sched::CycleDeps& deps) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = sched::RunCycle(std::move(snapshot), config, deps, "bench", {});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!s.ok()) {
    std::fprintf(stderr, "cycle failed: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  return ms;
}

// The run with the median `ms` of interleaved repetitions (Run has a double member ms).
template <typename Run>
Run MedianByMs(std::vector<Run> runs) {
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.ms < b.ms; });
  return runs[runs.size() / 2];
}

// Counts the pods a cycle sends to bind; binds nothing.
class CountingBinder final : public sched::Binder {
 public:
  void Bind(const std::string&, std::vector<sched::BindRequest> requests) override {
    bound += static_cast<int64_t>(requests.size());
  }
  int64_t bound = 0;
};

// The nearest-rank percentile p (0..1] of `v` (not empty).
inline double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

// The queue trees of the hierarchy benches: kTreeOrgs organisations x kTreeDepts departments x
// kTreeTeams teams; TreeLeaf(i) is the i-th team queue, TreeDept(org, dept) its parent.
inline constexpr int kTreeOrgs = 10;
inline constexpr int kTreeDepts = 10;
inline constexpr int kTreeTeams = 9;
inline std::string TreeDept(int org, int dept) {
  return "dept-" + std::to_string(org) + "-" + std::to_string(dept);
}
inline std::string TreeLeaf(int i) {
  const int org = i / (kTreeDepts * kTreeTeams);
  const int dept = (i / kTreeTeams) % kTreeDepts;
  return "team-" + std::to_string(org) + "-" + std::to_string(dept) + "-" +
         std::to_string(i % kTreeTeams);
}
inline std::string TreeLeafParent(int i) {
  return TreeDept(i / (kTreeDepts * kTreeTeams), (i / kTreeTeams) % kTreeDepts);
}

}  // namespace basalt::bench
