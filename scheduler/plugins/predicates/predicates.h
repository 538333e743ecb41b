#pragma once
// predicates: node filters, in order: node unschedulable, node selector + required node
// affinity, host ports, taints/tolerations (NoSchedule, NoExecute), required inter-pod affinity
// and anti-affinity (InterPodAffinity, incl. placed pods' anti-affinity), pod count. Resources
// are not checked here: the actions check InitResreq <= FutureIdle first (reference §4.7).
// Arguments: predicate.NodeAffinityEnable, predicate.NodePortsEnable,
// predicate.TaintTolerationEnable, predicate.PodAffinityEnable (all default true).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/task_info.h"
#include "scheduler/framework/outcome.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/plugins/interpodaffinity/inter_pod_affinity.h"

namespace basalt::sched {

inline constexpr std::string_view kPredicatesPluginName = "predicates";

struct PredicateOptions {
  bool node_affinity = true;
  bool node_ports = true;
  bool taint_toleration = true;
  bool pod_affinity = true;
};

absl::StatusOr<PredicateOptions> ParsePredicateOptions(const Arguments& args);
absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& args);

// Runs the filters; the first failure wins. `pod_affinity` (the session's InterPodAffinity)
// may be null: pod (anti-)affinity is then not checked.
Outcome CheckPredicates(const TaskInfo& task, const NodeInfo& node, const PredicateOptions& options,
                        InterPodAffinity* pod_affinity = nullptr);

// True if the task's nodeSelector and required node affinity accept the node.
bool MatchesNodeSelectorAndAffinity(const TaskInfo& task, const NodeInfo& node);

}  // namespace basalt::sched
