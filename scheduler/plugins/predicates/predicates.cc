#include "scheduler/plugins/predicates/predicates.h"

#include "fmt/format.h"
#include "scheduler/api/fit_error.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

absl::StatusOr<PredicateOptions> ParsePredicateOptions(const Arguments& args) {
  PredicateOptions o;
  auto affinity = args.GetBool("predicate.NodeAffinityEnable", true);
  if (!affinity.ok()) return affinity.status();
  auto ports = args.GetBool("predicate.NodePortsEnable", true);
  if (!ports.ok()) return ports.status();
  auto taints = args.GetBool("predicate.TaintTolerationEnable", true);
  if (!taints.ok()) return taints.status();
  auto pod_affinity = args.GetBool("predicate.PodAffinityEnable", true);
  if (!pod_affinity.ok()) return pod_affinity.status();
  o.pod_affinity = *pod_affinity;
  o.node_affinity = *affinity;
  o.node_ports = *ports;
  o.taint_toleration = *taints;
  return o;
}

bool MatchesNodeSelectorAndAffinity(const TaskInfo& task, const NodeInfo& node) {
  for (const auto& [key, value] : task.node_selector) {
    auto it = node.labels().find(key);
    if (it == node.labels().end() || it->second != value) return false;
  }
  if (task.affinity->required.has_value()) {
    bool any = false;
    for (const auto& term : *task.affinity->required) {
      if (term.Matches(node.name(), node.labels())) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  return true;
}

namespace {

constexpr std::string_view kUnschedulableTaintKey = "node.kubernetes.io/unschedulable";

bool Tolerated(const TaskInfo& task, const Taint& taint) {
  for (const auto& t : task.tolerations) {
    if (t.Tolerates(taint)) return true;
  }
  return false;
}

}  // namespace

Outcome CheckPredicates(const TaskInfo& task, const NodeInfo& node, const PredicateOptions& options,
                        InterPodAffinity* pod_affinity) {
  const std::string plugin(kPredicatesPluginName);
  if (node.unschedulable() &&
      !Tolerated(task, Taint{std::string(kUnschedulableTaintKey), "", TaintEffect::kNoSchedule})) {
    return Outcome::Unresolvable(plugin, std::string(kReasonUnschedulableNode));
  }
  if (options.node_affinity && !MatchesNodeSelectorAndAffinity(task, node)) {
    return Outcome::Unresolvable(plugin, std::string(kReasonNodeAffinity));
  }
  if (options.node_ports && !task.host_ports.empty() && node.HostPortsConflict(task.host_ports)) {
    return Outcome::Unschedulable(plugin, std::string(kReasonHostPorts));
  }
  if (options.taint_toleration) {
    for (const auto& taint : node.taints()) {
      if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
      if (!Tolerated(task, taint)) {
        return Outcome::Unresolvable(
            plugin, fmt::format("{} {{{}: {}}}", kReasonUntoleratedTaint, taint.key, taint.value));
      }
    }
  }
  if (options.pod_affinity && pod_affinity != nullptr) {
    if (Outcome o = pod_affinity->Filter(task, node, plugin); !o.ok()) return o;
  }
  if (node.pod_count() >= node.max_pods()) {
    return Outcome::Unschedulable(plugin, std::string(kReasonPodCountExceeded));
  }
  return Outcome::Success();
}

namespace {

class PredicatesPlugin final : public Plugin {
 public:
  explicit PredicatesPlugin(PredicateOptions o) : options_(o) {}
  std::string_view Name() const override { return kPredicatesPluginName; }
  void OnSessionOpen(Session& ssn) override {
    if (options_.pod_affinity) {
      pod_affinity_ = std::make_unique<InterPodAffinity>(ssn.cluster());
      if (pod_affinity_->Any()) {
        InterPodAffinity* index = pod_affinity_.get();
        ssn.AddEventHandler(EventHandler{[index](const TaskInfo& t) { index->TaskPlaced(t); },
                                         [index](const TaskInfo& t) { index->TaskRemoved(t); }});
      } else {
        pod_affinity_.reset();  // fast path: no pod in the snapshot has affinity terms
      }
    }
    ssn.AddPredicateFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      return CheckPredicates(task, node, options_, pod_affinity_.get());
    });
  }

 private:
  PredicateOptions options_;
  std::unique_ptr<InterPodAffinity> pod_affinity_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& args) {
  auto o = ParsePredicateOptions(args);
  if (!o.ok()) return o.status();
  return std::make_unique<PredicatesPlugin>(*o);
}

}  // namespace basalt::sched
