#pragma once
// JobMetrics holds the job controller's series under Volcano's names and labels (Volcano
// v1.15's vc-controller-manager), so dashboards and alerts written for Volcano keep working:
//   volcano_job_completed_phase_count{job_name,queue_name}   counter: the Job reached Completed
//   volcano_job_failed_phase_count{job_name,queue_name}      counter: the Job reached Failed
//   volcano_controller_job_to_pod_creation_latency_milliseconds  histogram, one observation per
//       pod created: pod creation less Job creation (buckets 5 * 2^i, 15 of them)
//   volcano_controller_job_e2e_creation_duration_milliseconds{job_name,queue,job_namespace}
//       gauge: Job creation to the visit that had created all of its pods
// job_name is "namespace/name" in the phase counters and the bare name in the e2e gauge, as in
// Volcano. A Job's series are removed when the Job is gone.
//
// Thread-safe (prometheus-cpp families are; the per-job bookkeeping is behind a mutex).
// Ownership: the registry must outlive it.

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "common/api/vocabulary.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace basalt::controllers {

class JobMetrics {
 public:
  explicit JobMetrics(prometheus::Registry& registry);
  JobMetrics(const JobMetrics&) = delete;
  JobMetrics& operator=(const JobMetrics&) = delete;

  // The Job `ns`/`name` of `queue` was written in `phase`, coming from another phase. Only
  // Completed and Failed are counted.
  void PhaseReached(std::string_view ns, std::string_view name, std::string_view queue,
                    api::JobPhase phase);
  // One pod of a Job was created `since_job_creation` after the Job.
  void PodCreated(std::chrono::nanoseconds since_job_creation);
  // Every pod of the Job exists, `since_job_creation` after the Job was created.
  void AllPodsCreated(std::string_view ns, std::string_view name, std::string_view queue,
                      std::chrono::nanoseconds since_job_creation);
  // The Job is gone: removes its series.
  void Remove(std::string_view ns, std::string_view name);

 private:
  struct JobSeries {
    std::map<std::string, prometheus::Counter*> completed;  // by queue_name
    std::map<std::string, prometheus::Counter*> failed;
    std::map<std::string, prometheus::Gauge*> e2e;
  };

  prometheus::Family<prometheus::Counter>& completed_;
  prometheus::Family<prometheus::Counter>& failed_;
  prometheus::Family<prometheus::Histogram>& pod_creation_family_;
  prometheus::Histogram& pod_creation_;
  prometheus::Family<prometheus::Gauge>& e2e_creation_;

  std::mutex mu_;
  std::map<std::string, JobSeries, std::less<>> jobs_;  // by "namespace/name", guarded by mu_
};

}  // namespace basalt::controllers
