#pragma once
// nodeorder: kube-scheduler's scoring plugins, each 0..100 times its weight, summed:
// leastrequested.weight (1), mostrequested.weight (0 = off), balancedresource.weight (1, over
// cpu, memory and nvidia.com/gpu), nodeaffinity.weight (2, preferred terms),
// tainttoleration.weight (3, PreferNoSchedule taints), podaffinity.weight (2, InterPodAffinity:
// preferred pod (anti-)affinity of the pod and of placed pods, normalised over the candidate
// nodes). imagelocality is not implemented (its weight is accepted and ignored: the scheduler
// does not watch node images).

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/task_info.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kNodeOrderPluginName = "nodeorder";

struct NodeOrderWeights {
  int64_t least_requested = 1;
  int64_t most_requested = 0;
  int64_t balanced_resource = 1;
  int64_t node_affinity = 2;
  int64_t pod_affinity = 2;
  int64_t taint_toleration = 3;
  int64_t image_locality = 1;
};

absl::StatusOr<NodeOrderWeights> ParseNodeOrderWeights(const Arguments& args);
absl::StatusOr<std::unique_ptr<Plugin>> NewNodeOrderPlugin(const Arguments& args);

// Unweighted 0..100 scores (upstream formulas, integer arithmetic as upstream).
int64_t LeastRequestedScore(const TaskInfo& task, const NodeInfo& node);
int64_t MostRequestedScore(const TaskInfo& task, const NodeInfo& node);
int64_t BalancedAllocationScore(const TaskInfo& task, const NodeInfo& node);
// Raw (not normalised) inputs of the batch scores.
int64_t PreferredNodeAffinityWeight(const TaskInfo& task, const NodeInfo& node);
int64_t IntolerablePreferNoScheduleTaints(const TaskInfo& task, const NodeInfo& node);

}  // namespace basalt::sched
