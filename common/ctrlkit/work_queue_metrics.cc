#include "common/ctrlkit/work_queue_metrics.h"

namespace basalt::ctrlkit {
namespace {

// 1ms .. ~16min in powers of 4 (client-go uses 1ns..10s by 10x; controllers here care
// about milliseconds to minutes).
prometheus::Histogram::BucketBoundaries DurationBuckets() {
  return {0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 4.096, 16.384, 65.536, 262.144, 1048.576};
}

}  // namespace

WorkQueueMetrics::WorkQueueMetrics(prometheus::Registry& registry)
    : depth_(prometheus::BuildGauge()
                 .Name("workqueue_depth")
                 .Help("Current depth of the work queue: keys waiting for a worker.")
                 .Register(registry)),
      adds_(prometheus::BuildCounter()
                .Name("workqueue_adds_total")
                .Help("Total number of keys added to the work queue.")
                .Register(registry)),
      retries_(prometheus::BuildCounter()
                   .Name("workqueue_retries_total")
                   .Help("Total number of rate-limited retries handled by the work queue.")
                   .Register(registry)),
      queue_duration_(prometheus::BuildHistogram()
                          .Name("workqueue_queue_duration_seconds")
                          .Help("How long a key waits in the work queue before a worker gets it.")
                          .Register(registry)),
      work_duration_(prometheus::BuildHistogram()
                         .Name("workqueue_work_duration_seconds")
                         .Help("How long processing a key takes, from Get to Done.")
                         .Register(registry)) {}

WorkQueueMetrics::Series WorkQueueMetrics::ForQueue(const std::string& queue_name) {
  const prometheus::Labels labels{{"name", queue_name}};
  return Series{
      .depth = &depth_.Add(labels),
      .adds = &adds_.Add(labels),
      .retries = &retries_.Add(labels),
      .queue_duration = &queue_duration_.Add(labels, DurationBuckets()),
      .work_duration = &work_duration_.Add(labels, DurationBuckets()),
  };
}

}  // namespace basalt::ctrlkit
