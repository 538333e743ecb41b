#pragma once
// Prometheus metrics for WorkQueues, named as client-go names them so dashboards carry over:
//
//   workqueue_depth{name}                     keys waiting for a worker
//   workqueue_adds_total{name}                keys added (duplicates of a waiting key not counted)
//   workqueue_retries_total{name}             AddRateLimited calls
//   workqueue_queue_duration_seconds{name}    time from Add to Get
//   workqueue_work_duration_seconds{name}     time from Get to Done
//
// One WorkQueueMetrics per process (per registry) serves every queue; each queue gets its
// own time series through its name. Thread-safe (prometheus-cpp metrics are atomic).
// Ownership: the registry must outlive this object and every queue using it.

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace basalt::ctrlkit {

class WorkQueueMetrics {
 public:
  // The time series of one queue.
  struct Series {
    prometheus::Gauge* depth;
    prometheus::Counter* adds;
    prometheus::Counter* retries;
    prometheus::Histogram* queue_duration;
    prometheus::Histogram* work_duration;
  };

  explicit WorkQueueMetrics(prometheus::Registry& registry);
  WorkQueueMetrics(const WorkQueueMetrics&) = delete;
  WorkQueueMetrics& operator=(const WorkQueueMetrics&) = delete;

  // Returns the series labelled name=`queue_name` (the same ones on repeated calls).
  Series ForQueue(const std::string& queue_name);

 private:
  prometheus::Family<prometheus::Gauge>& depth_;
  prometheus::Family<prometheus::Counter>& adds_;
  prometheus::Family<prometheus::Counter>& retries_;
  prometheus::Family<prometheus::Histogram>& queue_duration_;
  prometheus::Family<prometheus::Histogram>& work_duration_;
};

}  // namespace basalt::ctrlkit
