// sched_topology_bench: the cost of network-topology-aware placement. One scheduling cycle
// (enqueue, allocate, backfill; Volcano's default plugins plus network-topology-aware) on N
// nodes in 3 tiers of HyperNodes (8 nodes per switch, 8 switches per spine, 8 spines per
// tier-3 domain), J gangs of P pods each, run three ways: no networkTopology on the jobs,
// `hard` with highestTierAllowed 1 on every job, and `soft` on every job.
//
//   sched_topology_bench [nodes jobs pods_per_job]...
// Prints per case and mode: pods bound, cycle milliseconds, pods/s, and the throughput ratio
// against "off".

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
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
using basalt::sched::NodeInfo;
using basalt::sched::QueueInfo;
using basalt::sched::Resource;
using basalt::sched::TaskInfo;

constexpr std::string_view kConfig = R"(
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
  - name: network-topology-aware
)";

class CountingBinder final : public basalt::sched::Binder {
 public:
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    bound += static_cast<int64_t>(requests.size());
  }
  int64_t bound = 0;
};

enum class Mode { kOff, kHard, kSoft };

HyperNodeMemberInfo Member(std::string name, bool hypernode) {
  HyperNodeMemberInfo m;
  m.hypernode = hypernode;
  m.exact_name = std::move(name);
  return m;
}

ClusterInfo Build(int nodes, int jobs, int pods_per_job, Mode mode) {
  ClusterInfo c;
  for (int q = 0; q < 4; ++q) {
    QueueInfo queue;
    queue.name = fmt::format("q{}", q);
    queue.weight = q + 1;
    (void)c.AddQueue(queue);
  }
  auto hns = std::make_shared<HyperNodeMap>();
  for (int n = 0; n < nodes; ++n) {
    Resource alloc(32000, int64_t{128} << 30);
    alloc.SetUnits("nvidia.com/gpu", 8);
    NodeInfo node(fmt::format("node-{}", n), alloc);
    (void)c.AddNode(std::move(node));
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
  for (int j = 0; j < jobs; ++j) {
    JobInfo job("bench", fmt::format("job-{}", j));
    job.queue = fmt::format("q{}", j % 4);
    job.min_available = pods_per_job;
    job.podgroup_status.phase = basalt::sched::PodGroupPhase::kInqueue;
    job.creation_time = basalt::sched::Timestamp{} + std::chrono::seconds(j);
    if (mode != Mode::kOff) {
      job.network_topology = NetworkTopologyConstraint{
          .hard = mode == Mode::kHard, .highest_tier = 1, .highest_tier_name = ""};
    }
    (void)c.AddJob(std::move(job));
    for (int p = 0; p < pods_per_job; ++p) {
      TaskInfo t;
      t.name = fmt::format("job-{}-worker-{}", j, p);
      t.namespace_name = "bench";
      t.uid = "bench/" + t.name;
      t.job_id = fmt::format("bench/job-{}", j);
      t.resreq = Resource(1000, int64_t{2} << 30);
      t.resreq.SetUnits("nvidia.com/gpu", 1);
      t.init_resreq = t.resreq;
      (void)c.AddTask(std::move(t));
    }
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::vector<int>> cases;
  for (int i = 1; i + 2 < argc; i += 3) {
    cases.push_back({std::atoi(argv[i]), std::atoi(argv[i + 1]), std::atoi(argv[i + 2])});
  }
  if (cases.empty()) cases = {{1000, 200, 8}, {5000, 1000, 8}};
  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  auto config = basalt::sched::ParseSchedulerConfig(kConfig);
  if (!config.ok()) {
    std::fprintf(stderr, "config: %s\n", std::string(config.status().message()).c_str());
    return 1;
  }
  std::printf("%8s %8s %8s %6s %8s %12s %10s %8s\n", "nodes", "jobs", "pods", "mode", "bound",
              "cycle_ms", "pods/s", "ratio");
  for (const auto& c : cases) {
    double off_rate = 0;
    for (Mode mode : {Mode::kOff, Mode::kHard, Mode::kSoft}) {
      ClusterInfo snapshot = Build(c[0], c[1], c[2], mode);
      CountingBinder binder;
      basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, nullptr};
      auto start = std::chrono::steady_clock::now();
      absl::Status s = basalt::sched::RunCycle(std::move(snapshot), *config, deps, "bench", {});
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!s.ok()) {
        std::fprintf(stderr, "cycle failed\n");
        return 1;
      }
      const double rate = binder.bound / (ms / 1000.0);
      if (mode == Mode::kOff) off_rate = rate;
      std::printf("%8d %8d %8d %6s %8lld %12.1f %10.0f %8.2f\n", c[0], c[1], c[1] * c[2],
                  mode == Mode::kOff ? "off" : (mode == Mode::kHard ? "hard" : "soft"),
                  static_cast<long long>(binder.bound), ms, rate,
                  off_rate > 0 ? rate / off_rate : 0.0);
    }
  }
  return 0;
}
