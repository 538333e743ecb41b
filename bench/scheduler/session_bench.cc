// sched_session_bench: the real scheduler code — cache (ClusterState), snapshots, sessions with
// the default actions and plugins — on a synthetic cluster, with a binder and status writer that
// stand in for the API server: a bind is assumed in the cache and then confirmed at once as the
// pod informer would (pod bound to its node), a PodGroup status is recorded in the cache as the
// status writer does. Cycles run back to back until every pod is bound or a cycle binds nothing.
//
//   sched_session_bench --nodes=1000 --pods=10000 [--max-gang=64] [--seed=1]
//                       [--gpu-every=8] [--batches=1] [--full-snapshots] [--conf=FILE]
//                       [--percentage-nodes-to-find=0] [--placements=FILE]
//
// --batches=1: every job is pending before the first cycle (a backlog drained at once).
// --batches=N: the jobs arrive in N equal batches, one before each cycle, so sessions run on a
// cluster filling up with bound pods (steady arrival; session time percentiles mean something).
// --full-snapshots: every cycle copies the whole cache (no ReturnSnapshot), the reference the
// incremental snapshots are measured against.
// Workload: gang jobs of 1..max-gang pods (uniform, seeded), minAvailable = size, 4 queues with
// weights 1..4; pods ask 500m cpu and 1Gi (every gpu-every-th job also 1 nvidia.com/gpu per pod);
// nodes have 32 cpu, 128Gi, 8 GPUs, 110 pods. One run per process so that peak RSS belongs to
// one case (bench/scheduler/run.sh runs the matrix). Prints one line of figures.
// Cycle times are given as wall time and as the thread's CPU time (cycle_cpu_ms_*: what the
// cycle cost, less sensitive to other processes on a shared machine). placement_digest is a
// hash of every bind in order (pod uid, node): two builds that place the same way print the
// same digest for the same flags; --placements=FILE writes the binds, one "uid node" a line.

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/common/flags.h"
#include "bench/common/process_memory.h"
#include "common/api/compact.h"
#include "common/api/scheduling.h"
#include "common/resource/quantity.h"
#include "common/resource/resource_list.h"
#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/convert.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/framework/node_sampling.h"
#include "scheduler/plugins/registry.h"

namespace {

namespace api = basalt::api;
namespace cache = basalt::sched::cache;
namespace resource = basalt::resource;
using Clock = std::chrono::steady_clock;

struct Options {
  int nodes = 1000;
  int pods = 10000;
  int max_gang = 64;
  int gpu_every = 8;
  unsigned seed = 1;
  int percentage_nodes_to_find = 0;  // as vc-scheduler's flag: 0 = adaptive
  bool full_snapshots = false;       // --full-snapshots: a complete copy every cycle
  int batches = 1;  // the workload arrives in this many equal batches, one before each cycle
  std::string conf;
  std::string placements;  // --placements=FILE: every bind, "uid node" a line
};

resource::Quantity Parse(std::string_view q) {
  absl::StatusOr<resource::Quantity> v = resource::Quantity::Parse(q);
  if (!v.ok()) std::abort();
  return *v;
}

// The binder the session calls: assume, then confirm the bind as the pod informer would.
class LoopbackBinder final : public basalt::sched::Binder {
 public:
  LoopbackBinder(cache::ClusterState* state,
                 std::unordered_map<std::string, std::shared_ptr<const cache::CachedPod>>* pods)
      : state_(state), pods_(pods) {}
  void Bind(const std::string&, std::vector<basalt::sched::BindRequest> requests) override {
    for (const basalt::sched::BindRequest& r : requests) {
      if (!state_->Assume(r).ok()) {
        ++failed;
        continue;
      }
      auto it = pods_->find(r.task_uid);
      if (it == pods_->end()) std::abort();
      auto bound = std::make_shared<cache::CachedPod>(*it->second);
      bound->pod.node_name = r.node_name;
      bound->pod.phase = api::PodPhase::kRunning;
      bound->scheduled_condition.reset();
      it->second = bound;
      state_->UpsertPod(std::move(bound));
      ++bound_;
      Mix(r.task_uid);
      Mix(r.node_name);
      if (placements != nullptr)
        std::fprintf(placements, "%s %s\n", r.task_uid.c_str(), r.node_name.c_str());
    }
  }
  int64_t bound() const { return bound_; }
  uint64_t digest() const { return digest_; }
  int64_t failed = 0;
  std::FILE* placements = nullptr;

 private:
  cache::ClusterState* state_;
  std::unordered_map<std::string, std::shared_ptr<const cache::CachedPod>>* pods_;
  int64_t bound_ = 0;
  uint64_t digest_ = 14695981039346656037ull;  // FNV-1a over the binds in order

  void Mix(std::string_view s) {
    for (char c : s) digest_ = (digest_ ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    digest_ = (digest_ ^ 0xff) * 1099511628211ull;  // a separator no name contains
  }
};

// CPU time of the calling thread (the cycle runs on it), in milliseconds.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The status writer: what the session writes is what the cache believes next cycle.
class LoopbackSink final : public basalt::sched::StatusSink {
 public:
  explicit LoopbackSink(cache::ClusterState* state) : state_(state) {}
  void UpdatePodGroupStatus(basalt::sched::PodGroupStatusUpdate u) override {
    state_->SetPodGroupStatus(u.job_id, u.status);
    ++writes;
  }
  void UpdatePodCondition(basalt::sched::PodConditionUpdate u) override {
    state_->SetPodCondition(u.task_uid, u.condition);
    ++writes;
  }
  void UpdateQueueStatus(basalt::sched::QueueStatusUpdate u) override {
    state_->SetQueueAllocated(u.queue, u.allocated);
    ++writes;
  }
  void RecordEvent(basalt::sched::EventRecord) override { ++events; }
  int64_t writes = 0;
  int64_t events = 0;

 private:
  cache::ClusterState* state_;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int seed = 1;
  basalt::FlagSet flags("sched_session_bench");
  flags.Int("nodes", &o.nodes, "nodes");
  flags.Int("pods", &o.pods, "pods");
  flags.Int("max-gang", &o.max_gang, "largest gang (jobs of 1..max-gang pods)");
  flags.Int("gpu-every", &o.gpu_every, "every Nth job asks for GPUs");
  flags.Int("seed", &seed, "random seed");
  flags.Int("percentage-nodes-to-find", &o.percentage_nodes_to_find,
            "as vc-scheduler's flag: 0 = adaptive");
  flags.Bool("full-snapshots", &o.full_snapshots, "a complete copy of the cache every cycle");
  flags.Int("batches", &o.batches, "the workload arrives in this many equal batches");
  flags.String("conf", &o.conf, "scheduler configuration file (default: Volcano's)");
  flags.String("placements", &o.placements, "write every bind to this file, \"uid node\" a line");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  o.seed = static_cast<unsigned>(seed);
  o.max_gang = std::max(1, o.max_gang);
  o.gpu_every = std::max(1, o.gpu_every);
  o.batches = std::max(1, o.batches);

  auto plugins = basalt::sched::NewInTreeRegistry();
  auto actions = basalt::sched::NewInTreeActionRegistry();
  basalt::sched::SchedulerConfig config = basalt::sched::DefaultSchedulerConfig();
  if (!o.conf.empty()) {
    std::ifstream in(o.conf);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<basalt::sched::SchedulerConfig> c =
        basalt::sched::LoadSchedulerConfig(text.str(), plugins, actions);
    if (!c.ok()) {
      std::fprintf(stderr, "--conf: %s\n", std::string(c.status().message()).c_str());
      return 2;
    }
    config = *std::move(c);
  }

  // ---- Build the cluster through the cache's informer entry points ----
  const long rss_start = basalt::bench::PeakRssKiB();
  const auto build_start = Clock::now();
  cache::ClusterState state({});
  for (int q = 0; q < 4; ++q) {
    absl::StatusOr<api::Queue> queue = api::Queue::Parse(fmt::format(
        R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":)"
        R"({{"name":"q{}","uid":"q{}"}},"spec":{{"weight":{}}},"status":{{"state":"Open"}}}})",
        q, q, q + 1));
    if (!queue.ok()) std::abort();
    state.UpsertQueue(*queue);
  }
  for (int n = 0; n < o.nodes; ++n) {
    auto node = std::make_shared<api::CompactNode>();
    node->name = fmt::format("node-{:05}", n);
    node->uid = node->name;
    node->allocatable.Set("cpu", resource::Quantity::FromInt(32));
    node->allocatable.Set("memory", Parse("128Gi"));
    node->allocatable.Set("nvidia.com/gpu", resource::Quantity::FromInt(8));
    node->allocatable.Set("pods", resource::Quantity::FromInt(110));
    node->capacity = node->allocatable;
    node->labels = {{"kubernetes.io/hostname", node->name},
                    {"topology.kubernetes.io/zone", n % 2 == 0 ? "a" : "b"}};
    node->ready = true;
    state.UpsertNode(std::move(node));
  }
  std::mt19937 rng(o.seed);
  std::uniform_int_distribution<int> gang_size(1, o.max_gang);
  std::unordered_map<std::string, std::shared_ptr<const cache::CachedPod>> pods;
  pods.reserve(static_cast<size_t>(o.pods));
  const resource::Quantity cpu = resource::Quantity::FromMilli(500);
  const resource::Quantity mem = Parse("1Gi");
  struct Arrival {
    std::shared_ptr<api::PodGroup> pg;
    std::vector<std::shared_ptr<const cache::CachedPod>> pods;
  };
  std::vector<Arrival> arrivals;
  int jobs = 0;
  for (int created = 0; created < o.pods; ++jobs) {
    const int size = std::min(gang_size(rng), o.pods - created);
    const bool gpu = jobs % o.gpu_every == 0;
    const std::string job = fmt::format("job-{:06}", jobs);
    absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(fmt::format(
        R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
        R"({{"name":"{}","namespace":"bench","uid":"pg-{}",)"
        R"("creationTimestamp":"2026-11-29T{:02}:{:02}:{:02}Z"}},)"
        R"("spec":{{"minMember":{},"queue":"q{}","minResources":{{"cpu":"{}m","memory":"{}Gi"{}}}}}}})",
        job, job, (jobs / 3600) % 24, (jobs / 60) % 60, jobs % 60, size, jobs % 4, 500 * size, size,
        gpu ? fmt::format(R"(,"nvidia.com/gpu":"{}")", size) : ""));
    if (!pg.ok()) {
      std::fprintf(stderr, "podgroup: %s\n", std::string(pg.status().message()).c_str());
      return 1;
    }
    Arrival a{std::make_shared<api::PodGroup>(*std::move(pg)), {}};
    for (int i = 0; i < size; ++i, ++created) {
      auto p = std::make_shared<cache::CachedPod>();
      p->pod.namespace_name = "bench";
      p->pod.name = fmt::format("{}-worker-{}", job, i);
      p->pod.uid = "uid-" + p->pod.name;
      p->pod.scheduler_name = "volcano";
      p->pod.group_name = job;
      p->pod.task_spec = "worker";
      p->pod.request.Set("cpu", cpu);
      p->pod.request.Set("memory", mem);
      if (gpu) p->pod.request.Set("nvidia.com/gpu", resource::Quantity::FromInt(1));
      pods.emplace(p->pod.uid, p);
      a.pods.push_back(std::move(p));
    }
    arrivals.push_back(std::move(a));
  }
  size_t next_arrival = 0;
  // Hands jobs to the cache (as the informers would) until `pod_target` pods have arrived.
  int64_t arrived = 0;
  auto arrive = [&](int64_t pod_target) {
    while (next_arrival < arrivals.size() && arrived < pod_target) {
      Arrival& a = arrivals[next_arrival++];
      state.UpsertPodGroup(std::move(a.pg));
      for (auto& p : a.pods) {
        state.UpsertPod(std::move(p));
        ++arrived;
      }
    }
  };
  if (o.batches == 1) arrive(o.pods);
  const double build_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - build_start).count();

  // ---- Cycles ----
  LoopbackBinder binder(&state, &pods);
  if (!o.placements.empty()) {
    binder.placements = std::fopen(o.placements.c_str(), "w");
    if (binder.placements == nullptr) {
      std::fprintf(stderr, "--placements: cannot write %s\n", o.placements.c_str());
      return 2;
    }
  }
  LoopbackSink sink(&state);
  basalt::sched::NodeSamplingOptions sampling;
  sampling.percentage_nodes_to_find = o.percentage_nodes_to_find;
  basalt::sched::NodeSampler sampler(sampling);  // lives across cycles, as in vc-scheduler
  basalt::sched::CycleDeps deps{&plugins, &actions, &binder, nullptr, &sink, &sampler};
  std::vector<double> snapshot_ms;
  std::vector<double> session_ms;
  std::vector<double> cycle_cpu_ms;
  const auto run_start = Clock::now();
  int idle_cycles = 0;
  for (int cycle = 0; binder.bound() < o.pods && idle_cycles < 2 && cycle < 10000; ++cycle) {
    arrive(static_cast<int64_t>(o.pods) * (cycle + 1) / o.batches);
    const int64_t before = binder.bound();
    const int64_t writes_before = sink.writes;
    const double cpu0 = ThreadCpuMs();
    const auto t0 = Clock::now();
    cache::ClusterState::Snapshot snap = state.TakeSnapshot();
    const auto t1 = Clock::now();
    absl::Status s =
        basalt::sched::RunCycleOn(snap.cluster, config, deps, fmt::format("cycle-{}", cycle),
                                  std::chrono::system_clock::now());
    const auto t2 = Clock::now();
    if (s.ok() && !o.full_snapshots) state.ReturnSnapshot(std::move(snap.cluster), snap.handout);
    const auto t3 = Clock::now();
    cycle_cpu_ms.push_back(ThreadCpuMs() - cpu0);
    if (!s.ok()) {
      std::fprintf(stderr, "cycle failed: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    snapshot_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0 + (t3 - t2)).count());
    session_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    // A cycle that neither binds nor changes any status (e.g. admits nothing new) is idle.
    const bool idle = binder.bound() == before && sink.writes == writes_before;
    idle_cycles = idle && next_arrival == arrivals.size() ? idle_cycles + 1 : 0;
  }
  const double run_s = std::chrono::duration<double>(Clock::now() - run_start).count();
  const long rss = basalt::bench::PeakRssKiB();
  if (binder.placements != nullptr) std::fclose(binder.placements);

  std::vector<double> cycle_ms(session_ms.size());
  for (size_t i = 0; i < cycle_ms.size(); ++i) cycle_ms[i] = snapshot_ms[i] + session_ms[i];
  std::printf(
      "nodes=%d pods=%d batches=%d pct=%d jobs=%d bound=%lld cycles=%zu run_s=%.2f pods_per_s=%.0f "
      "cycle_ms_p50=%.1f cycle_ms_p99=%.1f cycle_ms_max=%.1f cycle_cpu_ms_p50=%.1f "
      "cycle_cpu_ms_p99=%.1f session_ms_p50=%.1f "
      "session_ms_p99=%.1f snapshot_ms_p50=%.1f snapshot_ms_p99=%.1f build_ms=%.0f "
      "rss_start_mib=%.1f peak_rss_mib=%.1f bind_failures=%lld status_writes=%lld events=%lld "
      "placement_digest=%016llx\n",
      o.nodes, o.pods, o.batches, o.percentage_nodes_to_find, jobs,
      static_cast<long long>(binder.bound()), session_ms.size(), run_s,
      static_cast<double>(binder.bound()) / run_s, Percentile(cycle_ms, 0.5),
      Percentile(cycle_ms, 0.99), Percentile(cycle_ms, 1.0), Percentile(cycle_cpu_ms, 0.5),
      Percentile(cycle_cpu_ms, 0.99), Percentile(session_ms, 0.5), Percentile(session_ms, 0.99),
      Percentile(snapshot_ms, 0.5), Percentile(snapshot_ms, 0.99), build_ms,
      static_cast<double>(rss_start) / 1024.0, static_cast<double>(rss) / 1024.0,
      static_cast<long long>(binder.failed), static_cast<long long>(sink.writes),
      static_cast<long long>(sink.events), static_cast<unsigned long long>(binder.digest()));
  return 0;
}
