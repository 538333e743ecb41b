#pragma once
// Scheduler is vc-scheduler's main loop: whenever the cluster state changed (and at least once
// every 30 s), at most once per --schedule-period counted from the end of the previous cycle,
// it takes a snapshot of the ClusterState and runs one cycle (RunCycle) with the configuration
// in force. ConfigWatcher re-reads --scheduler-conf every second and swaps a valid new
// configuration in (an invalid one keeps the previous and logs why).
//
// Time comes from the Clock seam (LoopDeps::clock): the period, the idle limit and the waits
// run on it, and a stop request wakes every wait at once, so tests drive the loop with a
// FakeClock and never sleep.
//
// Thread-safety: Run() on one thread; metrics are thread-safe. Ownership: borrows everything.

#include <chrono>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "common/util/clock.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "scheduler/app/volcano_metrics.h"
#include "scheduler/cache/binder.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/config_store.h"
#include "scheduler/framework/framework.h"

namespace basalt::sched::app {

class SchedulerMetrics {
 public:
  explicit SchedulerMetrics(prometheus::Registry& registry);
  void ObserveCycle(Clock::Duration d, size_t pending_jobs);
  void ObserveBind(const cache::BindResult& r);
  void ObserveReload(bool ok);
  // Sets basalt_scheduler_config_skipped_names{kind="action"|"plugin"}: how many names the
  // configuration in force skipped because Basalt does not implement them.
  void ObserveConfig(const SchedulerConfig& config);
  // The volcano_* series (volcano_metrics.h) from one cycle's report.
  void ObserveReport(const CycleReport& report, const ClusterInfo& cluster) {
    volcano_.ObserveCycle(report, cluster);
  }

 private:
  prometheus::Histogram& cycle_;
  prometheus::Gauge& pending_jobs_;
  prometheus::Counter& cycles_;
  prometheus::Counter& bound_;
  prometheus::Counter& bind_failures_;
  prometheus::Histogram& bind_latency_;
  prometheus::Family<prometheus::Counter>& reloads_;
  prometheus::Counter& reload_ok_;
  prometheus::Counter& reload_failed_;
  prometheus::Family<prometheus::Gauge>& skipped_;
  prometheus::Gauge& skipped_actions_;
  prometheus::Gauge& skipped_plugins_;
  VolcanoMetrics volcano_;
};

struct LoopDeps {
  cache::ClusterState* state = nullptr;
  ConfigStore* config = nullptr;
  // Serializes ConfigStore reads and reloads between the loop and the watcher. ConfigStore is
  // thread-safe through absl::Mutex, which ThreadSanitizer cannot see with Debian's Abseil; this
  // std::mutex keeps TSan runs of the binary meaningful at no cost (one lock per cycle/reload).
  std::mutex* config_mu = nullptr;
  CycleDeps cycle;
  SchedulerMetrics* metrics = nullptr;
  std::chrono::milliseconds period{1000};
  // A new pod or PodGroup (ClusterState::arrivals) is scheduled this long after it arrived,
  // without waiting out `period`; cycles stay at least twice the last cycle's duration apart,
  // so the scheduler spends at most a third of its time in cycles however fast work arrives.
  // Zero: every cycle waits for the period (Volcano's behaviour).
  std::chrono::milliseconds arrival_delay{0};
  // nullptr means Clock::Real(). The ClusterState should wait on the same clock.
  Clock* clock = nullptr;
};

// Runs cycles until `stop` fires.
absl::Status RunSchedulingLoop(std::stop_token stop, const LoopDeps& deps);

// Polls `path` every `interval`; reloads `config` when its content differs from the last
// content seen (`initial`: what main() loaded). Returns at stop.
// `config_mu` as in LoopDeps; `clock` times the polls (nullptr: Clock::Real()).
absl::Status RunConfigWatcher(std::stop_token stop, const std::string& path, ConfigStore* config,
                              std::mutex* config_mu, cache::ClusterState* state,
                              SchedulerMetrics* metrics, std::chrono::milliseconds interval,
                              std::string initial, Clock* clock = nullptr);

// Reads a whole file; kNotFound if it cannot be opened.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace basalt::sched::app
