#pragma once
// bestfit: scores a node higher the less CPU, memory and GPU it would have left after placing the
// task (each as a share of the node's allocatable, averaged over the dimensions the node has),
// the BestFit baseline of the FGD paper. Arguments: bestfit.weight (float, default 1).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kBestFitPluginName = "bestfit";

// 0..100: 100 when the task would leave nothing free on the node.
double BestFitScore(const TaskInfo& task, const NodeInfo& node);

absl::StatusOr<std::unique_ptr<Plugin>> NewBestFitPlugin(const Arguments& args);

}  // namespace basalt::sched
