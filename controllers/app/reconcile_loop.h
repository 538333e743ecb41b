#pragma once
// ReconcileLoop runs a controller's workers: N threads take keys from one WorkQueue and call the
// controller's reconcile function; a failed reconcile is retried with the queue's per-key
// backoff, a successful one resets it. Every reconcile is counted and timed in the process's
// Prometheus registry:
//
//   basalt_controller_reconcile_total{controller, result="success|error"}
//   basalt_controller_reconcile_duration_seconds{controller}
//
// A reconcile function may ask for a later visit of the same key by returning a delay (e.g. a
// job whose ttlSecondsAfterFinished has not passed yet).
//
// With max_requeues >= 0, a key that failed that many retries in a row is dropped instead of
// retried again (its backoff is reset and `on_drop` is told): the next event about the key
// brings it back. This bounds the work a permanently failing key costs; -1 retries forever.
//
// Thread-safety: Add/AddAfter from any thread (informer handlers); Run() once. Ownership: the
// Clock and the registry must outlive the loop.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "common/ctrlkit/work_queue.h"
#include "common/util/clock.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace basalt::controllers {

// The outcome of one reconcile: OK with an optional requeue delay, or an error (retried with
// backoff).
using ReconcileResult = absl::StatusOr<std::optional<Clock::Duration>>;
using ReconcileFn = std::function<ReconcileResult(const std::string& key)>;

// The reconcile counters and histograms shared by every loop of a process.
class ReconcileMetrics {
 public:
  explicit ReconcileMetrics(prometheus::Registry& registry);
  ReconcileMetrics(const ReconcileMetrics&) = delete;
  ReconcileMetrics& operator=(const ReconcileMetrics&) = delete;

  struct Series {
    prometheus::Counter* success;
    prometheus::Counter* error;
    prometheus::Histogram* duration;
  };
  Series For(const std::string& controller);

 private:
  prometheus::Family<prometheus::Counter>& total_;
  prometheus::Family<prometheus::Histogram>& duration_;
};

// Called with the key and its last error when the key is dropped after max_requeues retries.
using DropFn = std::function<void(const std::string& key, const absl::Status& error)>;

struct ReconcileLoopOptions {
  std::string name;  // "job", "queue", ... (metrics label, queue name)
  Clock* clock = nullptr;
  ReconcileMetrics* metrics = nullptr;                 // optional
  ctrlkit::WorkQueueMetrics* queue_metrics = nullptr;  // optional
  // Rate-limited retries of a failing key before it is dropped; -1 = unlimited.
  int max_requeues = -1;
  DropFn on_drop = nullptr;  // optional
};

class ReconcileLoop {
 public:
  ReconcileLoop(ReconcileLoopOptions options, ReconcileFn fn);
  ReconcileLoop(const ReconcileLoop&) = delete;
  ReconcileLoop& operator=(const ReconcileLoop&) = delete;

  void Add(const std::string& key) { queue_.Add(key); }
  void AddAfter(const std::string& key, Clock::Duration delay) { queue_.AddAfter(key, delay); }

  // Runs `workers` threads until `stop` fires, then drains the keys in flight and returns.
  void Run(const std::stop_token& stop, int workers);

  // Processes one key synchronously (tests): Get, reconcile, Done. False once shut down.
  bool ProcessNext();

  ctrlkit::WorkQueue& queue() { return queue_; }

 private:
  void Process(const std::string& key);

  const std::string name_;
  const int max_requeues_;
  DropFn on_drop_;
  ReconcileFn fn_;
  std::optional<ReconcileMetrics::Series> series_;
  ctrlkit::WorkQueue queue_;
};

}  // namespace basalt::controllers
