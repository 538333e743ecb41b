#pragma once
// priority: orders tasks and jobs by priority (higher first), lets a higher-priority job preempt
// a lower-priority one, and reports a job as starving while it has unplaced tasks.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kPriorityPluginName = "priority";

absl::StatusOr<std::unique_ptr<Plugin>> NewPriorityPlugin(const Arguments& args);

}  // namespace basalt::sched
