#pragma once
// deviceshare: the per-GPU predicate, for two device models.
//  - Milli-GPU shares (basalt-sim, the openb trace): a task with a GpuRequest (whole GPUs, or a
//    share of one GPU) fits a node only if the node's GPU model is allowed and enough of its
//    GPUs have the requested share free (NodeInfo::GpuFits); NodeInfo picks the GPUs by best fit
//    when the task is placed (scheduler/api/gpu_devices.h).
//  - Volcano's vGPU (HAMi volcano-vgpu-device-plugin), with deviceshare.VGPUEnable: a task with
//    volcano.sh/vgpu-number/-memory/-cores fits a node only if each container gets that many
//    of the node's registered GPUs with the memory and cores free, the GPU's vGPU count not
//    exhausted and, with volcano.sh/vgpu-podgroup-policy: spread, no pod of its PodGroup on
//    it (scheduler/api/vgpu.h). NodeInfo chooses the GPUs when the task is placed, in the order
//    of deviceshare.SchedulePolicy; the binder writes the choice into the pod.
//
// Arguments (Volcano's names): deviceshare.VGPUEnable (false), deviceshare.SchedulePolicy
// (binpack | spread; GPU order and score, default binpack order without score),
// deviceshare.ScheduleWeight (0: no node score). deviceshare.GPUSharingEnable and
// deviceshare.GPUNumberEnable (volcano.sh/gpu-memory, gpu-number) are refused when true: Basalt
// does not implement that older sharing mode.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/framework/outcome.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kDeviceSharePluginName = "deviceshare";

// Success, or why `task` does not fit `node`'s GPUs (milli-GPU model).
Outcome CheckGpuDevices(const TaskInfo& task, const NodeInfo& node);
// Success, or why `task`'s vGPU request does not fit `node`'s vGPU devices.
Outcome CheckVgpuDevices(const TaskInfo& task, const NodeInfo& node);

absl::StatusOr<std::unique_ptr<Plugin>> NewDeviceSharePlugin(const Arguments& args);

}  // namespace basalt::sched
