#pragma once
// VolcanoMetrics exports vc-scheduler's series under Volcano's names and labels
// (`volcano_*`, as Volcano v1.15's scheduler registers them), next to Basalt's own
// `basalt_scheduler_*`, so that dashboards and alerts written for Volcano keep working. Each
// cycle's CycleReport (scheduler/framework/cycle_report.h) updates them; docs/metrics.md lists
// every series, what it measures here and where it differs from Volcano.
//
// Per-job and per-queue series are removed when the job or queue is gone (a job: once it is no
// longer unschedulable, or absent from the cycle's snapshot), so a busy cluster does not grow
// the scrape without bound.
//
// Thread-safety: Observe* are called from the scheduling loop and the binder's callback
// threads; an internal mutex serializes them (prometheus-cpp metrics are thread-safe, the
// bookkeeping maps are not). Ownership: the families belong to the registry given at
// construction, which must outlive this object.

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "scheduler/api/cluster_info.h"
#include "scheduler/framework/cycle_report.h"

namespace basalt::sched::app {

class VolcanoMetrics {
 public:
  explicit VolcanoMetrics(prometheus::Registry& registry);
  VolcanoMetrics(const VolcanoMetrics&) = delete;
  VolcanoMetrics& operator=(const VolcanoMetrics&) = delete;

  // One cycle's report; `cluster` is the cycle's final snapshot (to drop series of jobs and
  // queues that are gone).
  void ObserveCycle(const CycleReport& report, const ClusterInfo& cluster);
  // A bind the API server refused: schedule_attempts_total{result="error"}.
  void ObserveBindError();
  // One bind's answer (ok or refused) after `latency`:
  // volcano_task_operation_latency_milliseconds{operation="bind",result="success"|"error"}.
  void ObserveBindLatency(bool ok, std::chrono::nanoseconds latency);

 private:
  // The three gauges of one resource vector (milli_cpu, memory_bytes, scalar_resources).
  struct ResourceGauges {
    prometheus::Family<prometheus::Gauge>* milli_cpu;
    prometheus::Family<prometheus::Gauge>* memory;
    prometheus::Family<prometheus::Gauge>* scalars;
  };
  ResourceGauges BuildResourceGauges(prometheus::Registry& registry, const std::string& what,
                                     const std::string& help);
  void SetQueueResource(const ResourceGauges& g, const std::string& queue, const Resource& r);
  void RemoveQueue(const std::string& queue);

  std::mutex mu_;
  prometheus::Histogram& e2e_latency_;
  prometheus::Histogram& job_latency_;
  prometheus::Family<prometheus::Gauge>& job_duration_;
  prometheus::Family<prometheus::Gauge>& job_start_time_;
  prometheus::Family<prometheus::Gauge>& job_last_time_;
  prometheus::Family<prometheus::Gauge>& job_share_;
  prometheus::Family<prometheus::Histogram>& plugin_latency_;
  prometheus::Family<prometheus::Histogram>& action_latency_;
  prometheus::Histogram& task_latency_;
  prometheus::Family<prometheus::Counter>& attempts_;
  prometheus::Counter& attempts_scheduled_;
  prometheus::Counter& attempts_unschedulable_;
  prometheus::Counter& attempts_error_;
  prometheus::Family<prometheus::Histogram>& task_operation_;
  prometheus::Histogram& bind_ok_latency_;
  prometheus::Histogram& bind_error_latency_;
  prometheus::Gauge& preemption_victims_;
  prometheus::Counter& preemption_attempts_;
  prometheus::Family<prometheus::Gauge>& unschedule_task_count_;
  prometheus::Gauge& unschedule_job_count_;
  prometheus::Family<prometheus::Counter>& job_retry_counts_;
  ResourceGauges allocated_;
  ResourceGauges request_;
  ResourceGauges deserved_;
  ResourceGauges capacity_;
  ResourceGauges real_capacity_;
  prometheus::Family<prometheus::Gauge>& queue_share_;
  prometheus::Family<prometheus::Gauge>& queue_weight_;
  prometheus::Family<prometheus::Gauge>& queue_overused_;

  // volcano_job_retry_counts by job_id (the PodGroup name), with the jobs "<namespace>/<name>"
  // it counts for; removed once none of them is in the cluster.
  struct JobSeries {
    prometheus::Counter* counter = nullptr;
    std::set<std::string> keys;
  };
  std::map<std::string, JobSeries> retries_;
  // job_id values of volcano_unschedule_task_count set by the last cycle.
  std::set<std::string> unschedulable_names_;
  // volcano_e2e_job_scheduling_duration by "<namespace>/<name>" (its labels carry both).
  // The three gauges of one placed job (duration, start and last time), by the same key.
  struct PlacedJob {
    prometheus::Gauge* duration = nullptr;
    prometheus::Gauge* start_time = nullptr;
    prometheus::Gauge* last_time = nullptr;
  };
  std::map<std::string, PlacedJob> job_durations_;
  // volcano_job_share by "<namespace>/<name>": the jobs drf reported in the last cycle.
  std::map<std::string, prometheus::Gauge*> job_shares_;
  // Queues with series, and the scalar resources each has series for (per family).
  std::set<std::string> queues_;
  std::map<std::pair<const void*, std::string>, std::set<std::string>> queue_scalars_;
};

}  // namespace basalt::sched::app
