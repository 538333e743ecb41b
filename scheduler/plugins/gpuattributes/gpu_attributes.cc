#include "scheduler/plugins/gpuattributes/gpu_attributes.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

using api::GpuAttributes;

const std::string* Label(const NodeInfo& node, const std::string& key) {
  auto it = node.labels().find(key);
  return it == node.labels().end() ? nullptr : &it->second;
}

// A node's GPU feature discovery labels, read once per session.
struct NodeGpu {
  std::optional<int64_t> memory_mib;  // nullopt when absent or not a positive integer
  const std::string* product = nullptr;
  const std::string* family = nullptr;
};

NodeGpu ReadNodeGpu(const NodeInfo& node) {
  static const std::string kMemory(api::kGfdMemoryLabel);
  static const std::string kProduct(api::kGfdProductLabel);
  static const std::string kFamily(api::kGfdFamilyLabel);
  NodeGpu out;
  out.product = Label(node, kProduct);
  out.family = Label(node, kFamily);
  if (const std::string* v = Label(node, kMemory); v != nullptr) {
    int64_t mib = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), mib);
    if (ec == std::errc() && ptr == v->data() + v->size() && mib > 0) out.memory_mib = mib;
  }
  return out;
}

bool In(const std::vector<std::string>& list, const std::string* value) {
  return value != nullptr && std::find(list.begin(), list.end(), *value) != list.end();
}

// True when the pod's required node affinity talks about GPU memory or product: it is then
// scored like a pod with annotations (smallest sufficient GPU first).
bool AffinityNamesGpu(const TaskInfo& task) {
  if (!task.affinity->required.has_value()) return false;
  for (const NodeSelectorTerm& term : *task.affinity->required) {
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      if (r.key == api::kGfdMemoryLabel || r.key == api::kGfdProductLabel) return true;
    }
  }
  return false;
}

class GpuAttributesPlugin final : public Plugin {
 public:
  explicit GpuAttributesPlugin(double weight) : weight_(weight) {}
  std::string_view Name() const override { return kGpuAttributesPluginName; }

  void OnSessionOpen(Session& ssn) override {
    // Nothing to do in a session without a task that asks for GPU attributes: no callbacks, so
    // the plugin costs nothing when on by default and unused.
    bool used = false;
    for (const auto& [id, job] : ssn.jobs()) {
      for (const auto& [uid, task] : job.tasks()) {
        if ((task.gpu_attributes != nullptr && !task.gpu_attributes->Empty()) ||
            AffinityNamesGpu(task)) {
          used = true;
          break;
        }
      }
      if (used) break;
    }
    if (!used) return;
    nodes_.reserve(ssn.node_list().size());
    for (const NodeInfo* node : ssn.node_list()) nodes_.emplace(node, ReadNodeGpu(*node));
    ssn.AddPredicateFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      return Predicate(task, node);
    });
    if (weight_ == 0) return;
    ssn.AddBatchNodeOrderFn(
        Name(), [this](const TaskInfo& task, const std::vector<const NodeInfo*>& nodes) {
          return Score(task, nodes);
        });
  }

 private:
  NodeGpu Gpu(const NodeInfo& node) const {
    auto it = nodes_.find(&node);
    return it != nodes_.end() ? it->second : ReadNodeGpu(node);
  }

  // The reasons a node is refused for one set of attributes, formatted once per session.
  struct Reasons {
    std::string invalid, no_memory, min_memory, max_memory, product, family;
  };
  const Reasons& ReasonsFor(const GpuAttributes& a) const {
    auto [it, inserted] = reasons_.try_emplace(&a);
    if (!inserted) return it->second;
    Reasons& r = it->second;
    r.invalid = fmt::format("invalid annotation {}", a.invalid);
    r.no_memory = fmt::format("node(s) without a {} label ({})", api::kGfdMemoryLabel,
                              a.min_memory_mib > 0 ? api::kGpuMinMemoryKey : api::kGpuMaxMemoryKey);
    r.min_memory = fmt::format("node(s) with less GPU memory ({}) than {}: {}",
                               api::kGfdMemoryLabel, api::kGpuMinMemoryKey, a.min_memory);
    r.max_memory = fmt::format("node(s) with more GPU memory ({}) than {}: {}",
                               api::kGfdMemoryLabel, api::kGpuMaxMemoryKey, a.max_memory);
    r.product = fmt::format("node(s) with a GPU product ({}) not in {}: {}", api::kGfdProductLabel,
                            api::kGpuProductsKey, fmt::join(a.products, ","));
    r.family = fmt::format("node(s) with a GPU family ({}) not in {}: {}", api::kGfdFamilyLabel,
                           api::kGpuFamiliesKey, fmt::join(a.families, ","));
    return r;
  }

  Outcome Refuse(const std::string& reason) const {
    return Outcome::Unresolvable(std::string(Name()), reason);
  }

  Outcome Predicate(const TaskInfo& task, const NodeInfo& node) const {
    const GpuAttributes* a = task.gpu_attributes.get();
    if (a == nullptr || !a->Filters()) return Outcome::Success();
    if (!a->invalid.empty()) return Refuse(ReasonsFor(*a).invalid);
    const NodeGpu gpu = Gpu(node);
    if (a->min_memory_mib > 0 || a->max_memory_mib > 0) {
      if (!gpu.memory_mib.has_value()) return Refuse(ReasonsFor(*a).no_memory);
      if (*gpu.memory_mib < a->min_memory_mib) return Refuse(ReasonsFor(*a).min_memory);
      if (a->max_memory_mib > 0 && *gpu.memory_mib > a->max_memory_mib) {
        return Refuse(ReasonsFor(*a).max_memory);
      }
    }
    if (!a->products.empty() && !In(a->products, gpu.product)) {
      return Refuse(ReasonsFor(*a).product);
    }
    if (!a->families.empty() && !In(a->families, gpu.family)) {
      return Refuse(ReasonsFor(*a).family);
    }
    return Outcome::Success();
  }

  std::vector<double> Score(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes) const {
    std::vector<double> scores(nodes.size(), 0.0);
    const GpuAttributes* a = task.gpu_attributes.get();
    const bool annotated = a != nullptr && a->invalid.empty() && !a->Empty();
    if (!annotated && !AffinityNamesGpu(task)) return scores;
    std::vector<NodeGpu> gpus(nodes.size());
    int64_t smallest = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      gpus[i] = Gpu(*nodes[i]);
      const std::optional<int64_t>& mib = gpus[i].memory_mib;
      if (mib.has_value() && (smallest == 0 || *mib < smallest)) smallest = *mib;
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      double score = 0;
      if (gpus[i].memory_mib.has_value()) {
        score = 100.0 * static_cast<double>(smallest) / static_cast<double>(*gpus[i].memory_mib);
      }
      if (annotated && In(a->preferred_products, gpus[i].product)) score += 100;
      scores[i] = score * weight_;
    }
    return scores;
  }

  double weight_;
  std::unordered_map<const NodeInfo*, NodeGpu> nodes_;
  // Keyed by the task's shared attributes (pods of one task template share them).
  mutable std::unordered_map<const GpuAttributes*, Reasons> reasons_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewGpuAttributesPlugin(const Arguments& args) {
  auto weight = args.GetFloat("gpuattributes.weight", 10);
  if (!weight.ok()) return weight.status();
  if (*weight < 0) {
    return absl::InvalidArgumentError(
        fmt::format("gpuattributes.weight must not be negative, got {}", *weight));
  }
  return std::unique_ptr<Plugin>(new GpuAttributesPlugin(*weight));
}

}  // namespace basalt::sched
