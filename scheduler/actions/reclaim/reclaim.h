#pragma once
// reclaim: lets a starving job of a queue that is below its deserved share take resources back
// from Running, preemptable pods (pod and PodGroup volcano.sh/preemptable not false) of other,
// reclaimable queues (reference §3.5); pods in kube-system or of a system-*-critical class never,
// and a task with preemptionPolicy: Never does not reclaim. Victims are the
// ones the plugins' Reclaimable functions allow (gang never breaks a gang, conformance spares
// critical pods, proportion takes only from queues above their deserved share). The reclaimer is
// pipelined onto the node; evictions are committed only if its job becomes pipelined.
// A job with a hard networkTopology (job level) reclaims inside one HyperNode it allows at a
// time (tier <= highestTierAllowed, holding its placed tasks; the most idle first): its tasks
// and their victims all in it. If none works nothing is evicted and the job's fit error (its
// PodGroup condition) says why. Partitions with their own hard networkTopology are left to
// gangreclaim (the PodGroup says so).

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kReclaimActionName = "reclaim";
std::unique_ptr<Action> NewReclaimAction();

}  // namespace basalt::sched
