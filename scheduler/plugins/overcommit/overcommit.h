#pragma once
// overcommit: admits PodGroups (JobEnqueueable) while the minResources of everything admitted
// but not yet running fit in `overcommit-factor` x cluster total - used (factor 1.2 by default).
// Basalt: a queue's admitted work counts only up to its Session::QueueHeadroom (what the queue
// may still be allocated), so that a full queue's backlog never blocks other queues' admission,
// and admitted PodGroups without any pod count only against candidates without pods.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kOvercommitPluginName = "overcommit";
inline constexpr double kDefaultOvercommitFactor = 1.2;

absl::StatusOr<std::unique_ptr<Plugin>> NewOvercommitPlugin(const Arguments& args);

}  // namespace basalt::sched
