#pragma once
// enqueue: admits Pending PodGroups (phase -> Inqueue) so their pods get created. Queues are
// popped in QueueOrder and one job at a time in JobOrder; a job is admitted if it has no
// minResources or every plugin's JobEnqueueable vote allows it (proportion: queue capability and
// fair share; overcommit: cluster headroom). A rejected job does not block later ones.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kEnqueueActionName = "enqueue";
std::unique_ptr<Action> NewEnqueueAction();

}  // namespace basalt::sched
