#pragma once
// predicates: node filters, in order: node unschedulable, node selector + required node
// affinity, host ports, taints/tolerations (NoSchedule, NoExecute), pod count. Resources are
// not checked here: the actions check InitResreq <= FutureIdle first (reference §4.7).
// Arguments: predicate.NodeAffinityEnable, predicate.NodePortsEnable,
// predicate.TaintTolerationEnable (all default true). Pod (anti-)affinity is not implemented yet.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/task_info.h"
#include "scheduler/framework/outcome.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kPredicatesPluginName = "predicates";

struct PredicateOptions {
  bool node_affinity = true;
  bool node_ports = true;
  bool taint_toleration = true;
};

absl::StatusOr<PredicateOptions> ParsePredicateOptions(const Arguments& args);
absl::StatusOr<std::unique_ptr<Plugin>> NewPredicatesPlugin(const Arguments& args);

// Runs the filters; the first failure wins.
Outcome CheckPredicates(const TaskInfo& task, const NodeInfo& node,
                        const PredicateOptions& options);

// True if the task's nodeSelector and required node affinity accept the node.
bool MatchesNodeSelectorAndAffinity(const TaskInfo& task, const NodeInfo& node);

}  // namespace basalt::sched
