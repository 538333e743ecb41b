#pragma once
// fgd: fragmentation gradient descent (Weng et al., USENIX ATC '23, "Beware of Fragmentation").
//
// The fragmentation of a node for one task type is the free GPU capacity (milli-GPU) that a task
// of that type could not use there: all of it when the task cannot be placed on the node at all
// (CPU or memory short, GPU model not allowed, too few GPUs with the share it needs) or when the
// task asks for no GPU; otherwise the free capacity of the GPUs whose free share is below the
// task's per-GPU share. A node's expected fragmentation weights the task types by their
// popularity. As in the paper, that popularity can be the *target workload*, known in advance
// (argument fgd.workloadFrom, a CSV of task types); without it the plugin learns the types and
// weights from the tasks in the snapshot (placed and pending), the workload seen so far. A node
// scores higher the less a
// placement grows its expected fragmentation. Inside a node, a shared task (one GPU, or one vGPU
// per container) takes the GPU whose use grows the node's expected fragmentation least: the
// plugin sets that cost on the session's nodes (GpuDevices/VgpuDevices::set_choice_cost), so the
// placement NodeInfo records and the vGPU assignment written into the pod follow it.
//
// The expected fragmentation of each node is cached per session and recomputed only for nodes
// whose tasks changed (allocate/deallocate events); the fragmentation after a candidate
// placement is memoized by node state (model, free CPU, memory and GPU shares), since many nodes
// are identical.
//
// Three kinds of node GPUs are seen the same way, as a list of per-GPU free shares (milli-GPU):
//   - per-GPU accounting (NodeInfo::gpus(), basalt-sim's model): the free share of each GPU;
//   - only the nvidia.com/gpu scalar (a real cluster without vGPU): the idle whole GPUs are
//     free (1000 each), the others taken; a task's nvidia.com/gpu request is whole GPUs;
//   - vGPU devices (NodeInfo::vgpus(), volcano.sh/node-vgpu-register): a GPU's free share is
//     the smaller of its free memory and free cores (per mille), 0 once its vGPU count is
//     taken or when unhealthy; a vGPU task's per-GPU share is the larger of its memory (MiB
//     over that node's GPU memory, or vgpu-memory-percentage) and its cores.
// A task of one kind cannot use GPUs of another kind (all their free share is a fragment).
//
// Arguments:
//   fgd.weight (float, default 1);
//   fgd.strandingWeight (float >= 0, default 0): adds this multiple of StrandedGpu (below) to a
//     node's expected fragmentation, so the score also counts the GPUs a placement leaves
//     without enough CPU or memory for the workload's GPU tasks; 0 is the paper's measure;
//   fgd.workloadFrom (path, default none: learned from the snapshot): a CSV file with a header
//     naming at least cpu_milli, memory_mib, num_gpu and gpu_milli, optionally gpu_spec (GPU
//     models, ParseGpuModels syntax) and weight (> 0, default 1); one row per task or task type,
//     rows of the same type add their weights. An openb pod list
//     (openb_pod_list_*.csv) is such a file: the distribution of its tasks. Read once per path
//     and modification time; a missing or malformed file makes the plugin's arguments invalid.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/cluster_info.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/vgpu.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kFgdPluginName = "fgd";

// One task type of the workload and its popularity (weights sum to 1).
struct FgdTaskType {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  GpuRequest gpu;  // for a vGPU type: count = vGPUs, milli unused (depends on the node)
  bool vgpu = false;
  int64_t vgpu_memory = 0;  // MiB per GPU; 0 and no percentage: whole
  int32_t vgpu_memory_percentage = kVgpuNoPercentage;
  int32_t vgpu_cores = 0;  // percent per GPU
  double weight = 0;
};

// What fgd sees of one node's GPUs (see the header comment).
struct FgdGpuView {
  enum class Kind { kNone, kDevices, kWholeScalar, kVgpu };
  Kind kind = Kind::kNone;
  std::string model;
  int64_t device_memory = 0;  // vGPU: MiB of the node's first GPU
  std::vector<int32_t> free;  // per-GPU free milli
};
FgdGpuView GpuViewOf(const NodeInfo& node);
// The number of GPUs GpuViewOf(node) lists, without building the view.
size_t GpuCountOf(const NodeInfo& node);

// The fragmentation of a view for one type, and the popularity-weighted sum.
int64_t GpuFragmentation(int64_t free_cpu, int64_t free_memory, const FgdGpuView& view,
                         const FgdTaskType& type);
double ExpectedGpuFragmentation(int64_t free_cpu, int64_t free_memory, const FgdGpuView& view,
                                const std::vector<FgdTaskType>& types);

// The task types of every task in `cluster` (jobs' tasks and other pods), weighted by count.
std::vector<FgdTaskType> FgdTaskTypes(const ClusterInfo& cluster);

// The task types of a workload CSV (the fgd.workloadFrom format above), weights summing to 1, in
// the order FgdTaskTypes uses; kInvalidArgument naming the line on bad input, kNotFound if the
// file cannot be read.
absl::StatusOr<std::vector<FgdTaskType>> ReadFgdWorkload(const std::string& path);

// CPU (milli) and memory (bytes) the workload's GPU task types ask per milli-GPU, weighing the
// types by popularity: sum(weight * cpu) / sum(weight * GPUs * milli) over the types that ask
// for whole or shared GPUs (not vGPU types, whose share depends on the node). Zero when no type
// asks for a GPU.
struct FgdHostPerGpu {
  double milli_cpu = 0;
  double memory = 0;
};
FgdHostPerGpu HostPerGpuMilli(const std::vector<FgdTaskType>& types);

// The free GPU capacity (milli-GPU) of a node that GPU tasks asking for CPU and memory in the
// workload's proportion (`per_gpu`) could not use because the node's CPU or memory would run out
// first: free - min(free, free_cpu / per_gpu.milli_cpu, free_memory / per_gpu.memory). The
// fragmentation above looks at one task at a time (a node is fragmented for a type only once
// that task no longer fits); this looks at the node's remaining CPU and memory against all of its
// free GPUs, so a placement that eats a GPU node's CPU without using its GPUs is seen as
// stranding them before they are lost. 0 for vGPU views and when `per_gpu` is zero.
double StrandedGpu(int64_t free_cpu, int64_t free_memory, const FgdGpuView& view,
                   const FgdHostPerGpu& per_gpu);

// Fragmentation (milli-GPU) of a node with `free_cpu`, `free_memory`, GPU `model` and per-GPU
// free shares `free_gpus`, for one task type.
int64_t GpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                         const std::vector<int32_t>& free_gpus, const FgdTaskType& type);
// The popularity-weighted sum over `types`.
double ExpectedGpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                                const std::vector<int32_t>& free_gpus,
                                const std::vector<FgdTaskType>& types);
// Expected fragmentation of `node` now, and after placing `task` on the GPUs NodeInfo would
// choose (the increase is what fgd minimises).
double NodeExpectedFragmentation(const NodeInfo& node, const std::vector<FgdTaskType>& types);
// The view after `task` takes the GPUs the node would give it.
FgdGpuView GpuViewAfter(const TaskInfo& task, const NodeInfo& node);
double FragmentationAfterPlacing(const TaskInfo& task, const NodeInfo& node,
                                 const std::vector<FgdTaskType>& types);

absl::StatusOr<std::unique_ptr<Plugin>> NewFgdPlugin(const Arguments& args);

}  // namespace basalt::sched
