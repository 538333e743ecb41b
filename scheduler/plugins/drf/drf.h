#pragma once
// drf: dominant resource fairness between jobs. A job's share is the largest fraction of any
// cluster resource it holds; jobs with a lower share go first, and a preemptor may evict a task
// only if that leaves the victim's job with a share at least the preemptor's would have.
//
// With the flag `enableHierarchy: true` (hdrf, hdrf.h): queues form a tree (the
// volcano.sh/hierarchy annotations, else spec.parent) and drf also orders queues by their
// hierarchical dominant share / weight, orders jobs by the same comparison of their paths, and
// takes preempt and reclaim victims only while the move keeps the preemptor's side no higher
// than the victim's where their paths part. The config is refused with proportion (any tier)
// and with capacity placed before drf, whose queue order would decide first (config.cc).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/queue_info.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/plugins/drf/hdrf.h"

namespace basalt::sched {

inline constexpr std::string_view kDrfPluginName = "drf";

absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments& args);

// max over the dimensions of `total` of allocated_r / total_r, where 0/0 = 0 and x/0 = 1.
double DrfShare(const Resource& allocated, const Resource& total);

class Session;
// hdrf's path of `queue` (segments below the root with their weights), see hdrf.h.
HdrfPath HdrfQueuePath(const Session& ssn, const QueueInfo& queue);

}  // namespace basalt::sched
