#pragma once
// drf: dominant resource fairness between jobs. A job's share is the largest fraction of any
// cluster resource it holds; jobs with a lower share go first, and a preemptor may evict a task
// only if that leaves the victim's job with a share at least the preemptor's would have.
// (Hierarchical drf, enableHierarchy, is not implemented yet.)

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kDrfPluginName = "drf";

absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments& args);

// max over the dimensions of `total` of allocated_r / total_r, where 0/0 = 0 and x/0 = 1.
double DrfShare(const Resource& allocated, const Resource& total);

}  // namespace basalt::sched
