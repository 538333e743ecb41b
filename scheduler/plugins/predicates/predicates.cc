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
  if (task.affinity.required.has_value()) {
    bool any = false;
    for (const auto& term : *task.affinity.required) {
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

bool PortsConflict(const HostPort& a, const HostPort& b) {
  if (a.port != b.port || a.protocol != b.protocol) return false;
  auto wildcard = [](const std::string& ip) { return ip.empty() || ip == "0.0.0.0"; };
  return wildcard(a.host_ip) || wildcard(b.host_ip) || a.host_ip == b.host_ip;
}

}  // namespace

Outcome CheckPredicates(const TaskInfo& task, const NodeInfo& node,
                        const PredicateOptions& options) {
  const std::string plugin(kPredicatesPluginName);
  if (node.unschedulable() &&
      !Tolerated(task, Taint{std::string(kUnschedulableTaintKey), "", TaintEffect::kNoSchedule})) {
    return Outcome::Unresolvable(plugin, std::string(kReasonUnschedulableNode));
  }
  if (options.node_affinity && !MatchesNodeSelectorAndAffinity(task, node)) {
    return Outcome::Unresolvable(plugin, std::string(kReasonNodeAffinity));
  }
  if (options.node_ports && !task.host_ports.empty()) {
    for (const auto& [uid, other] : node.tasks()) {
      if (other->uid == task.uid) continue;
      for (const auto& want : task.host_ports) {
        for (const auto& have : other->host_ports) {
          if (PortsConflict(want, have)) {
            return Outcome::Unschedulable(plugin, std::string(kReasonHostPorts));
          }
        }
      }
    }
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
    ssn.AddPredicateFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      return CheckPredicates(task, node, options_);
    });
  }

 private:
  PredicateOptions options_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& args) {
  auto o = ParsePredicateOptions(args);
  if (!o.ok()) return o.status();
  return std::make_unique<PredicatesPlugin>(*o);
}

}  // namespace basalt::sched
