#include "scheduler/plugins/nodeorder/nodeorder.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/interpodaffinity/inter_pod_affinity.h"

namespace basalt::sched {

namespace {

constexpr int64_t kMaxNodeScore = 100;
// Upstream's defaults for containers that request nothing (non-zero request accounting).
constexpr int64_t kDefaultMilliCpuRequest = 100;
constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

int64_t NonZero(int64_t v, int64_t dflt) { return v == 0 ? dflt : v; }

// Requested-after-placement for cpu and memory with upstream's non-zero defaults for the pod.
std::pair<int64_t, int64_t> RequestedCpuMem(const TaskInfo& task, const NodeInfo& node) {
  return {
      SaturatingAdd(node.used().milli_cpu(),
                    NonZero(task.resreq.milli_cpu(), kDefaultMilliCpuRequest)),
      SaturatingAdd(node.used().memory(), NonZero(task.resreq.memory(), kDefaultMemoryRequest))};
}

// GCC and Clang provide __int128; __extension__ keeps -Wpedantic quiet about it. The products
// below overflow int64 for capacities above 2^63/100 (a node may report anything).
__extension__ typedef __int128 Int128;

int64_t Least(int64_t requested, int64_t capacity) {
  if (capacity <= 0 || requested > capacity) return 0;
  return static_cast<int64_t>(static_cast<Int128>(capacity - requested) * kMaxNodeScore / capacity);
}

int64_t Most(int64_t requested, int64_t capacity) {
  if (capacity <= 0) return 0;
  requested = std::clamp<int64_t>(requested, 0, capacity);
  return static_cast<int64_t>(static_cast<Int128>(requested) * kMaxNodeScore / capacity);
}

}  // namespace

int64_t LeastRequestedScore(const TaskInfo& task, const NodeInfo& node) {
  auto [cpu, mem] = RequestedCpuMem(task, node);
  return (Least(cpu, node.allocatable().milli_cpu()) + Least(mem, node.allocatable().memory())) / 2;
}

int64_t MostRequestedScore(const TaskInfo& task, const NodeInfo& node) {
  auto [cpu, mem] = RequestedCpuMem(task, node);
  return (Most(cpu, node.allocatable().milli_cpu()) + Most(mem, node.allocatable().memory())) / 2;
}

int64_t BalancedAllocationScore(const TaskInfo& task, const NodeInfo& node) {
  // At most three fractions (cpu, memory, GPU): a fixed array, as this runs for every sampled
  // node of every task.
  double fractions[3];
  size_t count = 0;
  auto add_fraction = [&](int64_t alloc, int64_t req) {
    if (alloc == 0) return;
    fractions[count++] = std::min(1.0, static_cast<double>(req) / static_cast<double>(alloc));
  };
  add_fraction(node.allocatable().milli_cpu(),
               SaturatingAdd(node.used().milli_cpu(), task.resreq.milli_cpu()));
  add_fraction(node.allocatable().memory(),
               SaturatingAdd(node.used().memory(), task.resreq.memory()));
  if (const int64_t gpu = task.resreq.Get(kGpu); gpu > 0) {
    add_fraction(node.allocatable().Get(kGpu), SaturatingAdd(node.used().Get(kGpu), gpu));
  }
  double stddev = 0;
  if (count == 2) {
    stddev = std::abs(fractions[0] - fractions[1]) / 2;
  } else if (count > 2) {
    double mean = 0;
    for (size_t i = 0; i < count; ++i) mean += fractions[i];
    mean /= static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += (fractions[i] - mean) * (fractions[i] - mean);
    stddev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - stddev) * kMaxNodeScore);
}

int64_t PreferredNodeAffinityWeight(const TaskInfo& task, const NodeInfo& node) {
  int64_t sum = 0;
  for (const auto& term : task.affinity->preferred) {
    if (term.weight != 0 && term.preference.Matches(node.name(), node.labels())) sum += term.weight;
  }
  return sum;
}

int64_t IntolerablePreferNoScheduleTaints(const TaskInfo& task, const NodeInfo& node) {
  int64_t count = 0;
  for (const auto& taint : node.taints()) {
    if (taint.effect != TaintEffect::kPreferNoSchedule) continue;
    bool tolerated = false;
    for (const auto& t : task.tolerations) {
      if ((!t.effect.has_value() || *t.effect == TaintEffect::kPreferNoSchedule) &&
          t.Tolerates(taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) ++count;
  }
  return count;
}

absl::StatusOr<NodeOrderWeights> ParseNodeOrderWeights(const Arguments& args) {
  NodeOrderWeights w;
  struct Field {
    const char* key;
    int64_t* value;
  };
  const Field fields[] = {{"leastrequested.weight", &w.least_requested},
                          {"mostrequested.weight", &w.most_requested},
                          {"balancedresource.weight", &w.balanced_resource},
                          {"nodeaffinity.weight", &w.node_affinity},
                          {"podaffinity.weight", &w.pod_affinity},
                          {"tainttoleration.weight", &w.taint_toleration},
                          {"imagelocality.weight", &w.image_locality}};
  for (const auto& f : fields) {
    auto v = args.GetInt(f.key, *f.value);
    if (!v.ok()) return v.status();
    *f.value = *v;
  }
  return w;
}

namespace {

class NodeOrderPlugin final : public Plugin {
 public:
  explicit NodeOrderPlugin(NodeOrderWeights w) : w_(w) {}
  std::string_view Name() const override { return kNodeOrderPluginName; }

  void OnSessionOpen(Session& ssn) override {
    if (w_.pod_affinity != 0) {
      pod_affinity_ = std::make_unique<InterPodAffinity>(ssn.cluster());
      if (!pod_affinity_->Any()) pod_affinity_.reset();  // nothing to score
    }
    ssn.AddNodeOrderFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      int64_t score = 0;
      if (w_.least_requested != 0) score += w_.least_requested * LeastRequestedScore(task, node);
      if (w_.most_requested != 0) score += w_.most_requested * MostRequestedScore(task, node);
      if (w_.balanced_resource != 0)
        score += w_.balanced_resource * BalancedAllocationScore(task, node);
      return static_cast<double>(score);
    });
    ssn.AddBatchNodeOrderFn(
        Name(), [this](const TaskInfo& task, const std::vector<const NodeInfo*>& nodes) {
          std::vector<double> scores(nodes.size(), 0.0);
          if (w_.node_affinity != 0 && !task.affinity->preferred.empty()) {
            std::vector<int64_t> raw;
            int64_t max = 0;
            for (const NodeInfo* n : nodes) {
              raw.push_back(PreferredNodeAffinityWeight(task, *n));
              max = std::max(max, raw.back());
            }
            for (size_t i = 0; i < nodes.size(); ++i) {
              int64_t s = max == 0 ? 0 : raw[i] * kMaxNodeScore / max;
              scores[i] += static_cast<double>(s * w_.node_affinity);
            }
          }
          if (w_.taint_toleration != 0) {
            std::vector<int64_t> raw;
            int64_t max = 0;
            for (const NodeInfo* n : nodes) {
              raw.push_back(IntolerablePreferNoScheduleTaints(task, *n));
              max = std::max(max, raw.back());
            }
            for (size_t i = 0; i < nodes.size(); ++i) {
              int64_t s = max == 0 ? kMaxNodeScore : kMaxNodeScore - raw[i] * kMaxNodeScore / max;
              scores[i] += static_cast<double>(s * w_.taint_toleration);
            }
          }
          if (pod_affinity_ != nullptr) {
            std::vector<int64_t> s = pod_affinity_->Score(task, nodes);
            for (size_t i = 0; i < s.size() && i < nodes.size(); ++i) {
              scores[i] += static_cast<double>(s[i] * w_.pod_affinity);
            }
          }
          return scores;
        });
  }

 private:
  NodeOrderWeights w_;
  std::unique_ptr<InterPodAffinity> pod_affinity_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewNodeOrderPlugin(const Arguments& args) {
  auto w = ParseNodeOrderWeights(args);
  if (!w.ok()) return w.status();
  return std::make_unique<NodeOrderPlugin>(*w);
}

}  // namespace basalt::sched
