#pragma once
// task-topology: Volcano's plugin that places the tasks (roles) of one job by how they talk to
// each other, read from the PodGroup annotations of common/api/task_topology.h (a vcjob's
// annotations are copied to its PodGroup):
//
//   volcano.sh/task-topology-affinity       tasks of a group should share a node;
//   volcano.sh/task-topology-anti-affinity  tasks of a group should not share a node;
//   volcano.sh/task-topology-task-order     the order the tasks are placed in.
//
// At session open the pending pods of such a job are sorted into *buckets*: a pod joins the
// bucket whose members it relates to best (affinity +1, anti-affinity -1 per member; an
// unrelated bucket scores 0, ties go to the bucket asking for less), and opens a new bucket when
// every bucket would hold an anti-affine member. Pods already placed seed one bucket per node.
// A node's score for a pod of a bucket is the number of bucket members already on the node
// (plus one half if there are any), minus the job's pods on it that the pod is anti-affine to,
// plus how many of the bucket's pending pods (the pod first, then the smaller ones) fit on the
// node together, scaled by 100 / the largest bucket's size and multiplied by the weight. So a ps
// and its workers go to one node where they fit, and self-anti-affine workers spread. Both are
// preferences (scores), as in Volcano, not predicates.
//
// Task order within the job: the task-order annotation first, then pods in a bucket before the
// others, bigger buckets first, older buckets first, then the stronger kind of topology
// (self anti-affinity, affinity between tasks, self affinity, anti-affinity between tasks).
// Deliberate differences from Volcano (pkg/scheduler/plugins/task-topology):
//   - the task order annotation orders every task of the job, as Volcano's user guide describes
//     it; Volcano's code applies it only between pods of one bucket;
//   - bucket sizes in the task order are those at session open (a priority queue needs fixed
//     keys; Volcano compares sizes that shrink as pods are placed);
//   - a node already holding members of the bucket gets half a point more, so it wins the tie
//     against an empty node where as many pods fit, and a bucket larger than a node fills one
//     node before the next; Volcano leaves that tie to the other scoring plugins;
//   - the fit count takes the bucket's pending pods smallest first (deterministic); Volcano
//     removes pods in Go map order until the rest fits;
//   - placements undone within the session (a gang that did not become ready) are taken back;
//   - a malformed annotation on a PodGroup that bypassed the webhook is explained on it (condition
//     TaskTopology=False, reason InvalidAnnotation, and a Warning event); Volcano only logs it.
//     In both, the job is then scheduled as if it had no task topology.
//
// Arguments: task-topology.weight (integer >= 0, default 1; 0 turns node scoring off, the task
// order stays). Volcano's user guide uses 10, which outweighs nodeorder's spreading.
// Not in any default configuration. Thread-compatible: built for one session, used from its
// thread.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kTaskTopologyPluginName = "task-topology";
// The PodGroup condition that explains a malformed task topology.
inline constexpr std::string_view kConditionTaskTopology = "TaskTopology";
inline constexpr std::string_view kReasonInvalidTaskTopology = "InvalidAnnotation";

absl::StatusOr<std::unique_ptr<Plugin>> NewTaskTopologyPlugin(const Arguments& args);

}  // namespace basalt::sched
