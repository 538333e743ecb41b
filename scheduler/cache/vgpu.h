#pragma once
// The cache's side of vGPU sharing: reading a pod's vGPU request and assignment and a node's
// registered devices from the API objects, and the annotations the binder writes with the
// binding (scheduler/api/vgpu.h has the formats). Pure functions; thread-safe.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/api/core.h"
#include "scheduler/api/task_info.h"
#include "scheduler/api/vgpu.h"

namespace basalt::sched::cache {

// The pod's vGPU request, as Volcano reads it: each container with a volcano.sh/vgpu-number
// (or, alone, volcano.sh/vgpu-memory: one GPU) limit (request as fallback) asks for that many
// GPUs with vgpu-memory MiB (or vgpu-memory-percentage) and vgpu-cores each. Null if no
// container asks.
std::shared_ptr<const VgpuRequest> PodVgpuRequest(const api::Pod& pod);
// The assignment in the pod's volcano.sh/vgpu-ids-new annotation (empty if absent or malformed).
VgpuAssignment PodVgpuAssignment(const api::Pod& pod);
// Drops the per-GPU vGPU dimensions (memory, memory percentage, cores) from a pod's request:
// they are checked per device, not against the node's totals. volcano.sh/vgpu-number stays.
void StripPerDeviceVgpuResources(resource::ResourceList& request);

// The node's registered GPUs: the volcano.sh/node-vgpu-register text, already filtered by the
// handshake (api::CompactNode::vgpu_register). Empty when none; malformed text is logged.
VgpuDevices NodeVgpuDevices(std::string_view node_name, std::string_view register_text);

// The annotations the binder writes with the binding of a pod given `assignment` on `node`
// (Volcano's set: vgpu-ids-new, devices-to-allocate, vgpu-node, vgpu-time, bind-phase
// "allocating", bind-time), `unix_seconds` the time of the bind.
std::vector<std::pair<std::string, std::string>> VgpuBindAnnotations(
    const VgpuAssignment& assignment, std::string_view node, int64_t unix_seconds);

}  // namespace basalt::sched::cache
