#pragma once
// allocate: places the pending tasks of admitted jobs, gang by gang. Queues pop in QueueOrder
// (an Overused queue is skipped), jobs in JobOrder, tasks in TaskOrder. Each job's placements go
// into a Statement: committed (bound) only if the job is ready, kept if it is pipelined, and
// discarded otherwise (all-or-nothing). A ready job gets one more task per pop, so queues and jobs
// interleave fairly. If no enqueue action is configured, Pending PodGroups are admitted here.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kAllocateActionName = "allocate";
std::unique_ptr<Action> NewAllocateAction();

}  // namespace basalt::sched
