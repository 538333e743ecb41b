#pragma once
// fgd: fragmentation gradient descent (Weng et al., USENIX ATC '23, "Beware of Fragmentation").
//
// The fragmentation of a node for one task type is the free GPU capacity (milli-GPU) that a task
// of that type could not use there: all of it when the task cannot be placed on the node at all
// (CPU or memory short, GPU model not allowed, too few GPUs with the share it needs) or when the
// task asks for no GPU; otherwise the free capacity of the GPUs whose free share is below the
// task's per-GPU share. A node's expected fragmentation weights the task types by their
// popularity; the plugin learns the types and weights from the tasks in the snapshot (placed and
// pending), so the distribution is the workload seen so far. A node scores higher the less a
// placement grows its expected fragmentation.
//
// The expected fragmentation of each node is cached per session and recomputed only for nodes
// whose tasks changed (allocate/deallocate events); the fragmentation after a candidate
// placement is memoized by node state (model, free CPU, memory and GPU shares), since many nodes
// are identical.
//
// Arguments: fgd.weight (float, default 1).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/cluster_info.h"
#include "scheduler/api/node_info.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kFgdPluginName = "fgd";

// One task type of the workload and its popularity (weights sum to 1).
struct FgdTaskType {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  GpuRequest gpu;
  double weight = 0;
};

// The task types of every task in `cluster` (jobs' tasks and other pods), weighted by count.
std::vector<FgdTaskType> FgdTaskTypes(const ClusterInfo& cluster);

// Fragmentation (milli-GPU) of a node with `free_cpu`, `free_memory`, GPU `model` and per-GPU
// free shares `free_gpus`, for one task type.
int64_t GpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                         const std::vector<int32_t>& free_gpus, const FgdTaskType& type);
// The popularity-weighted sum over `types`.
double ExpectedGpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                                const std::vector<int32_t>& free_gpus,
                                const std::vector<FgdTaskType>& types);
// Expected fragmentation of `node` now, and after placing `task` on the GPUs NodeInfo would
// choose (the increase is what fgd minimises).
double NodeExpectedFragmentation(const NodeInfo& node, const std::vector<FgdTaskType>& types);
double FragmentationAfterPlacing(const TaskInfo& task, const NodeInfo& node,
                                 const std::vector<FgdTaskType>& types);

absl::StatusOr<std::unique_ptr<Plugin>> NewFgdPlugin(const Arguments& args);

}  // namespace basalt::sched
