#pragma once
// CycleReport is what one scheduling cycle did and saw, gathered by the session for the
// scheduler's metrics: the framework links no metrics library, and vc-scheduler turns a
// report into Prometheus series (scheduler/app/volcano_metrics.h) with Volcano's names.
//
// Filled by RunCycleOn when CycleDeps::report is set: action and plugin timings, tasks
// dispatched to bind, unschedulable jobs, evictions, preemption attempts and one entry per
// queue (allocated, request, capability, and deserved/share/real capability where a plugin
// that computes them, such as proportion, reported them with Session::ReportQueue), and the
// per-job shares drf reports with Session::ReportJobShare.
//
// Thread-safety: a plain value; written by the cycle's thread, read after the cycle.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"

namespace basalt::sched {

// What a plugin computed for a queue this cycle (proportion, capacity).
struct QueueShareReport {
  std::optional<Resource> deserved;
  std::optional<Resource> real_capability;
  std::optional<Resource> guarantee;  // the effective guarantee the plugin used
  std::optional<double> share;
};

struct CycleReport {
  using Duration = std::chrono::nanoseconds;

  struct Timing {
    std::string name;
    Duration duration{};
  };
  struct PluginTiming {
    std::string name;
    bool open = true;  // OnSessionOpen; false: OnSessionClose
    Duration duration{};
  };
  struct Job {
    std::string name;  // the PodGroup's name (Volcano's job_id label)
    std::string namespace_name;
    std::string queue;
    int unschedulable_tasks = 0;  // pending tasks of a gang not placed this cycle
  };
  struct ScheduledJob {
    std::string name;  // the PodGroup's name
    std::string namespace_name;
    std::string queue;
    Duration since_creation{};  // PodGroup creation -> the cycle that placed its gang
    Timestamp created{};        // the PodGroup's creation time
    Timestamp placed{};         // the cycle's time (when it placed the gang)
  };
  // A job's dominant resource share as drf computed it at the end of the cycle
  // (Session::ReportJobShare).
  struct JobShare {
    std::string name;  // the PodGroup's name (Volcano's job_id label)
    std::string namespace_name;
    double share = 0;
  };
  struct Queue {
    std::string name;
    int32_t weight = 1;
    Resource allocated;  // the queue's own jobs (not its children's)
    Resource request;    // allocated + pending
    std::optional<Resource> capability;
    QueueShareReport share;  // empty when no plugin reported the queue
    bool overused = false;
  };

  std::vector<Timing> actions;               // config order
  std::vector<PluginTiming> plugins;         // open in config order, then close
  Duration total{};                          // session open -> close
  int64_t tasks_dispatched = 0;              // handed to the binder this cycle
  std::vector<Duration> task_latencies;      // pod creation -> dispatched, one per dispatched task
  std::vector<Job> unschedulable_jobs;       // gangs left unschedulable this cycle
  std::vector<ScheduledJob> scheduled_jobs;  // gangs that became ready this cycle
  int64_t evictions = 0;                     // victims sent to the evictor (preempt, reclaim)
  int64_t preemption_attempts = 0;           // preemptor tasks the preempt action tried to place
  std::vector<Queue> queues;
  std::vector<JobShare> job_shares;  // one per job a plugin (drf) reported, in report order
};

}  // namespace basalt::sched
