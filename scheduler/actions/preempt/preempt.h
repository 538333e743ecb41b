#pragma once
// preempt: within a queue, lets a starving job evict Running or Bound pods of other jobs that
// the plugins' Preemptable functions allow (priority: lower-priority jobs only; gang: never below
// a victim gang's minAvailable; conformance: never critical pods). The preemptor is pipelined
// onto the node; evictions are committed only if its job becomes pipelined (reference §3.4,
// normal mode). Intra-job preemption and topology-aware preemption are not implemented yet.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kPreemptActionName = "preempt";
std::unique_ptr<Action> NewPreemptAction();

}  // namespace basalt::sched
