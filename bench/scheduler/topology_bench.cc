// sched_topology_bench: the cost and the effect of network-topology-aware placement, on N nodes
// of 8 GPUs in 3 tiers of HyperNodes (8 nodes per switch, 8 switches per spine, 8 spines per
// tier-3 domain); Volcano's default plugins plus network-topology-aware.
//
// Throughput (the default): one scheduling cycle (enqueue, allocate, backfill) with J gangs of
// P 1-GPU pods, run three ways: no networkTopology on the jobs, `hard` with highestTierAllowed 1
// on every job, `soft` on every job, and `parts`: partitions of 4 pods (subGroupPolicy), each
// hard highestTierAllowed 1, no job-level constraint. Prints per case and mode: pods bound,
// cycle milliseconds, pods/s, and the throughput ratio against "off".
//
//   sched_topology_bench [--case=NODES,JOBS,PODS_PER_JOB]...
//
// Allocation rate (`mixed`): a mixed workload whose demand is `demand_pct`% of the GPUs: jobs in
// turn hard highestTierAllowed 1, soft, and unconstrained, gangs of 1, 4, 8, 16, 24, 32 and 48
// 1-GPU pods in turn, in four weighted queues; `cycles` cycles, each on the placements of the
// previous ones (bound pods Running). Run with the plugin configured and without it (the jobs'
// constraints then ignored); prints the share of the GPUs allocated, per kind of job, the ratio
// on/off, and the time of the cycles.
//
//   sched_topology_bench --mixed=NODES,DEMAND_PCT,CYCLES

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/flags.h"
#include "bench/scheduler/bench_cluster.h"
#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"

namespace {

using basalt::sched::BindRequest;
using basalt::sched::ClusterInfo;
using basalt::sched::HyperNodeInfo;
using basalt::sched::HyperNodeMap;
using basalt::sched::HyperNodeMemberInfo;
using basalt::sched::JobInfo;
using basalt::sched::NetworkTopologyConstraint;
using basalt::sched::TaskInfo;
namespace bench = basalt::bench;

constexpr std::string_view kTopology = "  - name: network-topology-aware\n";

class CountingBinder final : public basalt::sched::Binder {
 public:
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    bound += static_cast<int64_t>(requests.size());
    for (BindRequest& r : requests) nodes[r.task_uid] = std::move(r.node_name);
  }
  int64_t bound = 0;
  std::map<std::string, std::string> nodes;  // task uid -> node
};

// kPartitions: no job-level constraint; each job's pods in partitions of kPartitionSize
// (spec.subGroupPolicy, label volcano.sh/partition-id), each partition hard highestTierAllowed 1.
enum class Mode { kOff, kHard, kSoft, kPartitions };
constexpr int kPartitionSize = 4;

HyperNodeMemberInfo Member(std::string name, bool hypernode) {
  HyperNodeMemberInfo m;
  m.hypernode = hypernode;
  m.exact_name = std::move(name);
  return m;
}

// The nodes, their HyperNodes and four queues (weights 1 to 4).
ClusterInfo Topology(int nodes) {
  ClusterInfo c;
  for (int q = 0; q < 4; ++q) bench::AddQueue(c, fmt::format("q{}", q), q + 1);
  auto hns = std::make_shared<HyperNodeMap>();
  for (int n = 0; n < nodes; ++n) {
    (void)c.AddNode(bench::GpuNode(fmt::format("node-{}", n), 32000, 128, 8));
    const std::string sw = fmt::format("sw-{}", n / 8);
    HyperNodeInfo& h = (*hns)[sw];
    h.name = sw;
    h.tier = 1;
    h.members.push_back(Member(fmt::format("node-{}", n), false));
  }
  const int switches = (nodes + 7) / 8;
  for (int s = 0; s < switches; ++s) {
    const std::string sp = fmt::format("sp-{}", s / 8);
    HyperNodeInfo& h = (*hns)[sp];
    h.name = sp;
    h.tier = 2;
    h.members.push_back(Member(fmt::format("sw-{}", s), true));
  }
  for (int s = 0; s < (switches + 7) / 8; ++s) {
    const std::string t3 = fmt::format("t3-{}", s / 8);
    HyperNodeInfo& h = (*hns)[t3];
    h.name = t3;
    h.tier = 3;
    h.members.push_back(Member(fmt::format("sp-{}", s), true));
  }
  c.set_hypernodes(std::move(hns));
  return c;
}

std::optional<NetworkTopologyConstraint> Constraint(Mode mode) {
  if (mode == Mode::kOff || mode == Mode::kPartitions) return std::nullopt;
  return NetworkTopologyConstraint{
      .hard = mode == Mode::kHard, .highest_tier = 1, .highest_tier_name = ""};
}

// Adds gang bench/<name> of `pods` 1-GPU pods; those in `placed` (uid -> node) run there.
void AddGang(ClusterInfo& c, const std::string& name, int created, int pods, Mode mode,
             const std::map<std::string, std::string>& placed) {
  JobInfo job = bench::InqueueJob(name, fmt::format("q{}", created % 4), pods, created);
  job.network_topology = Constraint(mode);
  if (mode == Mode::kPartitions) {
    basalt::sched::SubGroupPolicy policy;
    policy.name = "worker";
    policy.sub_group_size = kPartitionSize;
    policy.match_label_keys = {"volcano.sh/partition-id"};
    policy.network_topology = Constraint(Mode::kHard);
    job.sub_group_policies.push_back(std::move(policy));
  }
  (void)c.AddJob(std::move(job));
  for (int p = 0; p < pods; ++p) {
    const std::string task = fmt::format("{}-worker-{}", name, p);
    TaskInfo t = bench::GpuTask(name, task, "bench/" + task);
    if (mode == Mode::kPartitions) {
      t.labels.Update(
          [&](auto& m) { m.Set("volcano.sh/partition-id", std::to_string(p / kPartitionSize)); });
    }
    if (auto it = placed.find(t.uid); it != placed.end()) {
      t.node_name = it->second;
      t.status = basalt::sched::TaskStatus::kRunning;
    }
    (void)c.AddTask(std::move(t));
  }
}

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kOff:
      return "off";
    case Mode::kHard:
      return "hard";
    case Mode::kSoft:
      return "soft";
    case Mode::kPartitions:
      return "parts";
  }
  return "?";
}

ClusterInfo Build(int nodes, int jobs, int pods_per_job, Mode mode) {
  ClusterInfo c = Topology(nodes);
  for (int j = 0; j < jobs; ++j) AddGang(c, fmt::format("job-{}", j), j, pods_per_job, mode, {});
  return c;
}

// The mixed workload: job j is of kind j % 3 (hard, soft, none) and size kSizes[j % 7].
constexpr int kSizes[] = {1, 4, 8, 16, 24, 32, 48};
constexpr Mode kKinds[] = {Mode::kHard, Mode::kSoft, Mode::kOff};

int MixedJobs(int nodes, int demand_pct) {
  const int64_t wanted = int64_t{nodes} * 8 * demand_pct / 100;
  int64_t demand = 0;
  int jobs = 0;
  while (demand < wanted) demand += kSizes[jobs++ % 7];
  return jobs;
}

ClusterInfo BuildMixed(int nodes, int jobs, const std::map<std::string, std::string>& placed) {
  ClusterInfo c = Topology(nodes);
  for (int j = 0; j < jobs; ++j) {
    AddGang(c, fmt::format("job-{}", j), j, kSizes[j % 7], kKinds[j % 3], placed);
  }
  return c;
}

int Mixed(int nodes, int demand_pct, int cycles) {
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  const auto on = bench::ConfigOrDie(bench::DefaultConfig("", kTopology));
  const auto off = bench::ConfigOrDie(bench::DefaultConfig());
  const int jobs = MixedJobs(nodes, demand_pct);
  int64_t demand[3] = {0, 0, 0};
  for (int j = 0; j < jobs; ++j) demand[j % 3] += kSizes[j % 7];
  const double gpus = double(nodes) * 8;
  std::printf("nodes=%d gpus=%.0f jobs=%d demand=%lld GPUs (%d%%) cycles=%d\n", nodes, gpus, jobs,
              static_cast<long long>(demand[0] + demand[1] + demand[2]), demand_pct, cycles);
  std::printf("%8s %10s %10s %8s %10s %10s %10s %12s\n", "plugin", "allocated", "share", "vs_off",
              "hard", "soft", "none", "cycles_ms");
  double off_share = 0;
  for (bool plugin : {false, true}) {
    std::map<std::string, std::string> placed;
    double ms = 0;
    for (int cycle = 0; cycle < cycles; ++cycle) {
      CountingBinder binder;
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr};
      ms += bench::TimedCycle(BuildMixed(nodes, jobs, placed), plugin ? on : off, deps);
      placed.merge(binder.nodes);
    }
    int64_t by_kind[3] = {0, 0, 0};
    for (const auto& [uid, node] : placed) {
      // uid "bench/job-<j>-worker-<p>"
      by_kind[std::atoi(uid.c_str() + std::strlen("bench/job-")) % 3]++;
    }
    const double share = double(placed.size()) / gpus;
    if (!plugin) off_share = share;
    std::printf("%8s %10zu %10.3f %8.3f %10.3f %10.3f %10.3f %12.1f\n", plugin ? "on" : "off",
                placed.size(), share, off_share > 0 ? share / off_share : 0.0,
                double(by_kind[0]) / double(demand[0]), double(by_kind[1]) / double(demand[1]),
                double(by_kind[2]) / double(demand[2]), ms);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> case_flags;
  std::string mixed;
  basalt::FlagSet flags("sched_topology_bench");
  flags.StringArray("case", &case_flags, "NODES,JOBS,PODS (pods per job), repeatable");
  flags.String(
      "mixed", &mixed,
      "NODES,DEMAND_PCT,CYCLES: the mixed workload instead of the cases (e.g. 5000,125,2)");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  if (!mixed.empty()) {
    const std::vector<int> m = basalt::bench::IntTupleOrExit("mixed", mixed, 3);
    return Mixed(m[0], m[1], m[2]);
  }
  std::vector<std::vector<int>> cases;
  for (const std::string& c : case_flags)
    cases.push_back(basalt::bench::IntTupleOrExit("case", c, 3));
  if (cases.empty()) cases = {{1000, 200, 8}, {5000, 1000, 8}};
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  const auto config = bench::ConfigOrDie(bench::DefaultConfig("", kTopology));
  std::printf("%8s %8s %8s %6s %8s %12s %10s %8s\n", "nodes", "jobs", "pods", "mode", "bound",
              "cycle_ms", "pods/s", "ratio");
  for (const auto& c : cases) {
    double off_rate = 0;
    for (Mode mode : {Mode::kOff, Mode::kHard, Mode::kSoft, Mode::kPartitions}) {
      CountingBinder binder;
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr};
      const double ms = bench::TimedCycle(Build(c[0], c[1], c[2], mode), config, deps);
      const double rate = binder.bound / (ms / 1000.0);
      if (mode == Mode::kOff) off_rate = rate;
      std::printf("%8d %8d %8d %6s %8lld %12.1f %10.0f %8.2f\n", c[0], c[1], c[1] * c[2],
                  ModeName(mode), static_cast<long long>(binder.bound), ms, rate,
                  off_rate > 0 ? rate / off_rate : 0.0);
    }
  }
  return 0;
}
