#include "controllers/app/reconcile_loop.h"

#include <thread>
#include <vector>

#include "common/util/log.h"
#include "common/util/status.h"
#include "prometheus/family.h"

namespace basalt::controllers {

ReconcileMetrics::ReconcileMetrics(prometheus::Registry& registry)
    : total_(prometheus::BuildCounter()
                 .Name("basalt_controller_reconcile_total")
                 .Help("Reconciles by controller and result (success, error)")
                 .Register(registry)),
      duration_(prometheus::BuildHistogram()
                    .Name("basalt_controller_reconcile_duration_seconds")
                    .Help("Time taken by one reconcile")
                    .Register(registry)) {}

ReconcileMetrics::Series ReconcileMetrics::For(const std::string& controller) {
  return Series{
      &total_.Add({{"controller", controller}, {"result", "success"}}),
      &total_.Add({{"controller", controller}, {"result", "error"}}),
      &duration_.Add({{"controller", controller}},
                     prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                             0.25, 0.5, 1, 2.5, 5, 10, 30})};
}

namespace {
ctrlkit::WorkQueueOptions QueueOptions(const ReconcileLoopOptions& o) {
  ctrlkit::WorkQueueOptions q;
  q.name = o.name;
  q.clock = o.clock;
  q.metrics = o.queue_metrics;
  return q;
}
}  // namespace

ReconcileLoop::ReconcileLoop(ReconcileLoopOptions options, ReconcileFn fn)
    : name_(options.name),
      max_requeues_(options.max_requeues),
      on_drop_(std::move(options.on_drop)),
      fn_(std::move(fn)),
      queue_(QueueOptions(options)) {
  if (options.metrics != nullptr) series_ = options.metrics->For(options.name);
}

void ReconcileLoop::Process(const std::string& key) {
  const auto start = std::chrono::steady_clock::now();
  ReconcileResult r = fn_(key);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (series_) series_->duration->Observe(seconds);
  if (r.ok()) {
    if (series_) series_->success->Increment();
    queue_.Forget(key);
    if (r->has_value()) queue_.AddAfter(key, **r);
  } else {
    if (series_) series_->error->Increment();
    const int retries = queue_.NumRequeues(key);
    if (max_requeues_ >= 0 && retries >= max_requeues_) {
      BASALT_LOG_WARNING("Reconcile failed, retry limit reached: dropped until the next event",
                         "controller", name_, "key", key, "retries", retries, "error",
                         MessageOf(r.status()));
      queue_.Forget(key);
      if (on_drop_) on_drop_(key, r.status());
      queue_.Done(key);
      return;
    }
    if (retries < 3 || retries % 10 == 0) {
      BASALT_LOG_WARNING("Reconcile failed, will retry", "controller", name_, "key", key, "retries",
                         retries, "error", MessageOf(r.status()));
    } else {
      BASALT_VLOG(2, "Reconcile failed, will retry", "controller", name_, "key", key, "error",
                  MessageOf(r.status()));
    }
    queue_.AddRateLimited(key);
  }
  queue_.Done(key);
}

bool ReconcileLoop::ProcessNext() {
  std::optional<std::string> key = queue_.Get();
  if (!key) return false;
  Process(*key);
  return true;
}

void ReconcileLoop::Run(const std::stop_token& stop, int workers) {
  std::vector<std::jthread> threads;
  threads.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back([this] {
      while (ProcessNext()) {
      }
    });
  }
  std::stop_callback on_stop(stop, [this] { queue_.ShutDown(); });
  for (auto& t : threads) t.join();
  queue_.ShutDownWithDrain();
}

}  // namespace basalt::controllers
