#pragma once
// preempt (reference §3.4, normal mode): within a queue, a starving job takes room from
// lower-priority work.
//
// Preemptors: the pending tasks of starving, admitted, valid jobs, in queue, job and task order;
// a task with preemptionPolicy: Never or known never to fit is skipped. Victims, on each
// candidate node (one that fails only on resources or other resolvable reasons): Running or
// Bound pods of another job of the same queue that are preemptable (pod and PodGroup
// volcano.sh/preemptable not false), never in kube-system nor of class system-cluster-critical
// or system-node-critical, BestEffort only for a BestEffort preemptor, and allowed by the
// plugins' Preemptable functions (priority: a lower-priority job). Whatever the configuration,
// a victim job keeps at least minAvailable ready pods, unless it goes whole (all its ready pods,
// on any nodes, and only if the preemptor uses every node it frees). A victim counts as freed
// once evicted (Releasing: in FutureIdle, this cycle and later ones), so a task that fits in
// FutureIdle evicts nothing. Per node the victims are taken lowest job priority, then lowest
// task priority, then youngest first until the task fits, then those it can do without are
// spared; the node needing the fewest victims wins (then the fewest of jobs already hit, the
// least important victims, the node score). The preemptor is pipelined there (its pod gets
// nominatedNodeName). Once the gang is placed, every victim (spare pod, or whole job) it can do
// without is reprieved, checked by placing the gang again. All of a job's evictions are one
// statement, committed only if the job is then pipelined (its whole gang fits), else undone:
// nothing is evicted for a gang that would still not run.
//
// Then, within each of those jobs, a pending task may evict lower-priority Running tasks of its
// own job (task priority; the gang size is unchanged), committed per task.
//
// A job with a hard networkTopology (job level) is placed, and its victims taken, inside one
// HyperNode it allows (tier <= highestTierAllowed, holding its placed tasks), each tried in turn,
// the most idle first; a victim job is taken whole only if all its pods are inside. If none
// works nothing is evicted and the job's fit error (its PodGroup condition) says why, naming the
// tier and the HyperNodes. Partitions with their own hard networkTopology are left to
// gangpreempt (the PodGroup says so).
//
// Topology-aware preemption (enableTopologyAwarePreemption, pod affinity) is not implemented.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kPreemptActionName = "preempt";
std::unique_ptr<Action> NewPreemptAction();

}  // namespace basalt::sched
