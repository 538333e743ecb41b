#pragma once
// deviceshare: the per-GPU predicate. A task with a GpuRequest (whole GPUs, or a share of one
// GPU) fits a node only if the node's GPU model is allowed and enough of its GPUs have the
// requested share free (NodeInfo::GpuFits); which GPUs it takes is chosen by NodeInfo when the
// task is placed (best fit). Volcano's deviceshare plugin does this for its vGPU devices; this
// one works on the device list Basalt keeps per node (scheduler/api/gpu_devices.h).
//
// Arguments: none read yet (Volcano's deviceshare.* arguments are accepted and ignored).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/framework/outcome.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kDeviceSharePluginName = "deviceshare";

// Success, or why `task` does not fit `node`'s GPUs.
Outcome CheckGpuDevices(const TaskInfo& task, const NodeInfo& node);

absl::StatusOr<std::unique_ptr<Plugin>> NewDeviceSharePlugin(const Arguments& args);

}  // namespace basalt::sched
