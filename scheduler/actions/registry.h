#pragma once
// The in-tree action set, registered explicitly.

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

// Registers: enqueue, allocate, backfill, reclaim, preempt, gangpreempt, gangreclaim.
ActionRegistry NewInTreeActionRegistry();

}  // namespace basalt::sched
