#pragma once
// The workloads basalt-sim replays: nodes, queues and jobs (gangs of identical tasks) with
// arrival times and durations in virtual seconds. Two sources:
//   - the Alibaba GPU trace v2023 ("openb") CSVs, sampled with the published protocol of the
//     FGD paper (tasks drawn uniformly with replacement until the requested GPUs reach a given
//     share of cluster capacity, one arrival per virtual second, no departures);
//   - a small YAML format (docs/sim.md) with nodes, queues, jobs, arrivals, durations, gangs.
// Value types.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/gpu_devices.h"

namespace basalt::sim {

struct SimNode {
  std::string name;
  int64_t milli_cpu = 0;
  int64_t memory = 0;  // bytes
  int32_t gpus = 0;
  std::string model;
  // vGPU devices as Volcano's device plugin registers them (volcano.sh/node-vgpu-register): GPU
  // i is "GPU-<name>-<i>" with `vgpu_shares` vGPUs and `vgpu_memory` MiB.
  int32_t vgpus = 0;
  int32_t vgpu_shares = 0;
  int64_t vgpu_memory = 0;
  std::string vgpu_type;
};

struct SimTask {
  std::string name;
  int64_t milli_cpu = 0;
  int64_t memory = 0;  // bytes
  sched::GpuRequest gpu;
  // A vGPU request (volcano.sh/vgpu-number, vgpu-memory MiB, vgpu-cores percent), one container.
  int32_t vgpu_number = 0;
  int64_t vgpu_memory = 0;
  int32_t vgpu_cores = 0;
  bool vgpu_spread = false;  // volcano.sh/vgpu-podgroup-policy: spread
};

struct SimJob {
  std::string name;
  std::string queue = "default";
  double arrival = 0;   // virtual seconds
  double duration = 0;  // seconds from placement; <= 0: runs forever
  int32_t min_available = 1;
  std::vector<SimTask> tasks;
};

struct SimQueue {
  std::string name;
  int32_t weight = 1;
};

struct Workload {
  std::vector<SimNode> nodes;
  std::vector<SimQueue> queues;  // "default" is added when absent
  std::vector<SimJob> jobs;      // sorted by arrival
  // Arrived GPU demand (milli-GPU) at which the headline figure is read: the cluster's GPU
  // capacity for the trace protocol (100% arrival), 0 for none.
  int64_t mark_gpu_milli = 0;
};

// openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model.
absl::StatusOr<std::vector<SimNode>> ReadOpenbNodes(const std::string& path);
// openb_pod_list_*.csv: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...
absl::StatusOr<std::vector<SimTask>> ReadOpenbTasks(const std::string& path);
// The published protocol: draws tasks uniformly with replacement (seeded) until their GPU
// requests reach `demand_share` (e.g. 1.3) of the nodes' GPU capacity; task i arrives at i s.
Workload SampleOpenbWorkload(std::vector<SimNode> nodes, const std::vector<SimTask>& tasks,
                             double demand_share, uint64_t seed);
// Parses the YAML workload format; kInvalidArgument naming the field on bad input.
absl::StatusOr<Workload> ParseWorkloadYaml(std::string_view yaml);

}  // namespace basalt::sim
