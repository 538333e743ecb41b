#pragma once
// capacity: queue quotas per resource dimension, as Volcano's capacity plugin (name `capacity`
// in the scheduler configuration; use it instead of proportion, not beside it).
//
//  * `spec.deserved`: what the queue is entitled to. Lent to other queues while idle; `reclaim`
//    takes it back from queues allocated above their deserved share.
//  * `spec.guarantee.resource`: never reclaimed (a victim queue keeps at least its guarantee).
//  * `spec.capability`: hard cap, including the candidate task's own request.
//  * realCapability = min(capability, parent's realCapability - sum of the siblings'
//    guarantees + own guarantee); flat: the cluster total stands in for the parent.
//    deserved is clipped to realCapability and raised to the guarantee.
//  * Arguments: `ancestorReclaimLevel` (int, default 0: a reclaimer also counts as entitled when
//    an ancestor up to that many levels above it is under its deserved share, and a victim is
//    taken only if its ancestors up to that level that the reclaimer does not share are above
//    theirs).
//  * Flag `enableHierarchy: true`: queues form a tree by `spec.parent`; a queue with no parent
//    (or parent `root`) is a child of the root queue (a `root` Queue object if there is one,
//    else an implicit root whose capability is the cluster's allocatable). A parent caps its
//    subtree; jobs are placed only in leaf queues (a job of a non-leaf queue stays Pending and
//    its PodGroup says why); queue order compares the subtrees where two leaves' paths part.
//
// Deliberate differences from Volcano:
//  * a job in a non-leaf queue, or a queue whose parent is missing or forms a cycle, is refused
//    alone with a message; Volcano stops the plugin for every queue;
//  * refusals name the queue (or the ancestor) and the dimension that hold the job back, in the
//    PodGroup's Unschedulable condition, and so does a reclaim that ancestorReclaimLevel limits;
//  * reclaim never takes a victim from a subtree that queue order would serve before the
//    reclaimer's once the victim is gone (its pod would take the GPU back: a reclaim loop);
//  * QueueHeadroom (realCapability - allocated, over the queue and its ancestors) so that
//    overcommit never counts work a full queue cannot place against other queues.
//
// Not thread-safe; one instance per session.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kCapacityPluginName = "capacity";
inline constexpr std::string_view kRootQueueName = "root";

absl::StatusOr<std::unique_ptr<Plugin>> NewCapacityPlugin(const Arguments& args);

// One queue of the capacity computation (exposed for the formula tests).
struct CapacityQueue {
  std::string name;
  std::string parent;  // hierarchical only; empty = child of the root
  Resource deserved;   // spec.deserved (empty = none)
  Resource guarantee;
  std::optional<Resource> capability;
};

// Result per queue: deserved (clipped and raised as above) and realCapability.
struct CapacityLimits {
  Resource deserved;
  Resource real_capability;
};

// Volcano's flat rules: realCapability = min(capability, total - all guarantees + guarantee)
// (capability cpu or memory <= 0 = unlimited), deserved = max(min(deserved, realCapability),
// guarantee).
std::map<std::string, CapacityLimits> ComputeFlatCapacity(const Resource& total,
                                                          const std::vector<CapacityQueue>& queues);

}  // namespace basalt::sched
