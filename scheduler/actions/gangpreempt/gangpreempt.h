#pragma once
// gangpreempt (Volcano v1.15): within a queue, a starving job takes room for its whole pending
// gang from jobs of lower priority, choosing whole-job victim bundles (gang_eviction.h).
// Victims: Running or Bound pods of a lower-priority job of the same queue, preemptable (pod
// and PodGroup), never in kube-system nor of a system-*-critical class, allowed by the plugins'
// Preemptable functions. Unlike preempt, a BestEffort preemptor is not limited to BestEffort
// victims (as Volcano, which leaves that to the plugins); preemptionPolicy: Never pods take
// nothing.
//
// Arguments (configurations: - name: gangpreempt): maxDomains, allowWholeBundle,
// victimOrderPolicy.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kGangPreemptActionName = "gangpreempt";
std::unique_ptr<Action> NewGangPreemptAction();

}  // namespace basalt::sched
