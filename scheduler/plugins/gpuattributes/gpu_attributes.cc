#include "scheduler/plugins/gpuattributes/gpu_attributes.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

using api::GpuAttributes;

const std::string* Label(const NodeInfo& node, std::string_view key) {
  auto it = node.labels().find(std::string(key));
  return it == node.labels().end() ? nullptr : &it->second;
}

// nvidia.com/gpu.memory in MiB; nullopt when absent or not a positive integer.
std::optional<int64_t> NodeGpuMemory(const NodeInfo& node) {
  const std::string* v = Label(node, api::kGfdMemoryLabel);
  if (v == nullptr) return std::nullopt;
  int64_t mib = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), mib);
  if (ec != std::errc() || ptr != v->data() + v->size() || mib <= 0) return std::nullopt;
  return mib;
}

bool In(const std::vector<std::string>& list, const std::string* value) {
  return value != nullptr && std::find(list.begin(), list.end(), *value) != list.end();
}

// True when the pod's required node affinity talks about GPU memory or product: it is then
// scored like a pod with annotations (smallest sufficient GPU first).
bool AffinityNamesGpu(const TaskInfo& task) {
  if (!task.affinity.required.has_value()) return false;
  for (const NodeSelectorTerm& term : *task.affinity.required) {
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
  Outcome Predicate(const TaskInfo& task, const NodeInfo& node) const {
    const GpuAttributes* a = task.gpu_attributes.get();
    if (a == nullptr || !a->Filters()) return Outcome::Success();
    const std::string plugin(Name());
    if (!a->invalid.empty()) {
      return Outcome::Unresolvable(plugin, fmt::format("invalid annotation {}", a->invalid));
    }
    if (a->min_memory_mib > 0 || a->max_memory_mib > 0) {
      std::optional<int64_t> mib = NodeGpuMemory(node);
      if (!mib.has_value()) {
        return Outcome::Unresolvable(
            plugin,
            fmt::format("node(s) without a {} label ({})", api::kGfdMemoryLabel,
                        a->min_memory_mib > 0 ? api::kGpuMinMemoryKey : api::kGpuMaxMemoryKey));
      }
      if (*mib < a->min_memory_mib) {
        return Outcome::Unresolvable(
            plugin, fmt::format("node(s) with less GPU memory ({}) than {}: {}",
                                api::kGfdMemoryLabel, api::kGpuMinMemoryKey, a->min_memory));
      }
      if (a->max_memory_mib > 0 && *mib > a->max_memory_mib) {
        return Outcome::Unresolvable(
            plugin, fmt::format("node(s) with more GPU memory ({}) than {}: {}",
                                api::kGfdMemoryLabel, api::kGpuMaxMemoryKey, a->max_memory));
      }
    }
    if (!a->products.empty() && !In(a->products, Label(node, api::kGfdProductLabel))) {
      return Outcome::Unresolvable(
          plugin,
          fmt::format("node(s) with a GPU product ({}) not in {}: {}", api::kGfdProductLabel,
                      api::kGpuProductsKey, fmt::join(a->products, ",")));
    }
    if (!a->families.empty() && !In(a->families, Label(node, api::kGfdFamilyLabel))) {
      return Outcome::Unresolvable(
          plugin, fmt::format("node(s) with a GPU family ({}) not in {}: {}", api::kGfdFamilyLabel,
                              api::kGpuFamiliesKey, fmt::join(a->families, ",")));
    }
    return Outcome::Success();
  }

  std::vector<double> Score(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes) const {
    std::vector<double> scores(nodes.size(), 0.0);
    const GpuAttributes* a = task.gpu_attributes.get();
    const bool annotated = a != nullptr && a->invalid.empty() && !a->Empty();
    if (!annotated && !AffinityNamesGpu(task)) return scores;
    std::vector<std::optional<int64_t>> memory(nodes.size());
    int64_t smallest = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      memory[i] = NodeGpuMemory(*nodes[i]);
      if (memory[i].has_value() && (smallest == 0 || *memory[i] < smallest)) smallest = *memory[i];
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      double score = 0;
      if (memory[i].has_value()) score = 100.0 * static_cast<double>(smallest) / *memory[i];
      if (annotated && In(a->preferred_products, Label(*nodes[i], api::kGfdProductLabel))) {
        score += 100;
      }
      scores[i] = score * weight_;
    }
    return scores;
  }

  double weight_;
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
