#pragma once
// Feasibility: whether a task or a gang could ever be placed as the cluster and its queue are
// now, whatever other pods hold. A pod that asks for more of a resource than any single node can
// allocate, or more than its queue's capability, will stay Pending until the cluster or the queue
// changes; so will a gang whose minResources exceed all nodes together or the capability.
//
// The session marks such tasks and jobs at open (JobInfo::never_fit_tasks / never_fits). The
// actions then explain and skip them, and the fair-share plugins leave their requests out of the
// queue's demand: a request that can never be served must not inflate its queue's share, reserve
// queue capacity at admission, or make the queue look overused, which would hold every other job
// of the queue (issue 11, defect 2). The check is redone every session, so adding a larger node or
// raising a capability takes effect at the next cycle.
//
// Pure functions over snapshot types; not thread-safe for concurrent mutation of `job`.

#include <map>
#include <optional>
#include <string>

#include "scheduler/api/job_info.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/queue_info.h"
#include "scheduler/api/resource.h"

namespace basalt::sched {

// What no placement can exceed.
struct ClusterLimits {
  Resource largest_node;  // per dimension, the largest allocatable of any node
  Resource total;         // sum of every node's allocatable (saturating)
  size_t nodes = 0;
};

ClusterLimits ComputeClusterLimits(const std::map<std::string, NodeInfo>& nodes);

// The limit `queue`'s capability puts on `dimension`, or nullopt when unlimited (no capability,
// the dimension absent from it, or cpu/memory <= 0, as the proportion plugin reads it).
std::optional<int64_t> CapabilityLimit(const QueueInfo& queue, std::string_view dimension);

// Why `task` can never be placed, e.g. "pod ns/p can never be scheduled: it requests cpu 64, more
// than the largest allocatable of any node (32)", or nullopt if it may fit. The node check is
// skipped while the cluster has no node (nothing to compare with). `queue` may be null.
std::optional<std::string> TaskNeverFits(const TaskInfo& task, const ClusterLimits& limits,
                                         const QueueInfo* queue);

// Recomputes job.never_fit_tasks (pending tasks that can never be placed) and job.never_fits
// (non-empty when the gang as a whole can never run: its tasks that may fit are fewer than
// minAvailable, or, while it is not admitted yet, its minResources exceed the capability of
// `queue` or every node together).
void MarkNeverFits(JobInfo& job, const ClusterLimits& limits, const QueueInfo* queue);

}  // namespace basalt::sched
