#pragma once
// gangreclaim (Volcano v1.15): a starving job of a queue that is not overused takes room for
// its whole pending gang from other, reclaimable queues, choosing whole-job victim bundles
// (gang_eviction.h), the queue the plugins would serve last first. Victims: Running pods of a
// job of another queue that is reclaimable, preemptable (pod and PodGroup), never in
// kube-system nor of a system-*-critical class, allowed by the plugins' Reclaimable functions
// (proportion: the victim queue keeps its deserved share). The queue must be Preemptive.
//
// Arguments (configurations: - name: gangreclaim): maxDomains, allowWholeBundle,
// victimOrderPolicy.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kGangReclaimActionName = "gangreclaim";
std::unique_ptr<Action> NewGangReclaimAction();

}  // namespace basalt::sched
