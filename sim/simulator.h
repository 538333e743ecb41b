#pragma once
// Simulator replays a Workload through the real scheduler core in virtual time: one ClusterInfo
// kept across cycles (no API server, no per-cycle snapshot copy), RunCycleOn with the session,
// the actions and the plugins of a scheduler configuration file, and a binder that "binds" by
// marking the tasks Running. Every `period` virtual seconds one cycle runs over the jobs that
// arrived; placed tasks finish after their job's duration.
//
// Trace protocol (Workload::mark_gpu_milli > 0 and no durations): a task that the cycle after
// its arrival could not place is dropped (nothing ever departs, so it could never fit later),
// and jobs whose tasks all run leave the session's job list (their pods stay on the nodes as
// pods outside any PodGroup), which keeps each cycle's cost independent of history.
//
// Outputs: a CSV time series (see kCsvHeader in simulator.cc and docs/sim.md) and a summary.
// Not thread-safe.

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "scheduler/conf/config.h"
#include "sim/workload.h"

namespace basalt::sim {

struct SimOptions {
  double period = 10;                // virtual seconds between scheduling cycles
  bool drop_unplaced = true;         // the trace protocol (see above); YAML workloads keep retrying
  std::ostream* csv = nullptr;       // may be null
  std::ostream* progress = nullptr;  // may be null; a line every ~5% of the jobs
  // May be null: one CSV line per placed task, in placement order, "task,node,vgpus,gpus"
  // (header first): vgpus the indices of the node's vGPU devices it got (in
  // volcano.sh/node-vgpu-register order), gpus its GPU indices (per-GPU accounting), each list
  // joined by '|'.
  std::ostream* placements = nullptr;
};

struct SimSummary {
  int64_t jobs = 0;
  int64_t tasks = 0;
  int64_t placed_tasks = 0;
  int64_t dropped_tasks = 0;
  int64_t cycles = 0;
  int64_t gpu_capacity_milli = 0;
  // GPU allocation (share of capacity) when arrived demand first reached mark_gpu_milli; -1 if
  // there was no mark or it was never reached.
  double gpu_alloc_at_mark = -1;
  double gpu_alloc_final = 0;
  double cpu_alloc_final = 0;
  // GPU-seconds held by gangs with fewer running tasks than minAvailable, and all GPU-seconds.
  double partial_gang_gpu_seconds = 0;
  double gpu_seconds = 0;
  double mean_queue_delay = 0;   // virtual seconds, arrival -> placement
  double scheduler_seconds = 0;  // wall time spent in RunCycleOn
  double wall_seconds = 0;
  std::string OneLine() const;
};

// Runs `workload` with `config` (already loaded and validated against the in-tree registries).
absl::StatusOr<SimSummary> RunSimulation(const Workload& workload,
                                         const sched::SchedulerConfig& config,
                                         const SimOptions& options);

}  // namespace basalt::sim
