#include "scheduler/app/scheduler.h"

#include <fstream>
#include <sstream>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched::app {
namespace {

prometheus::Histogram::BucketBoundaries SecondsBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

double Seconds(Clock::Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

SchedulerMetrics::SchedulerMetrics(prometheus::Registry& registry)
    : cycle_(prometheus::BuildHistogram()
                 .Name("basalt_scheduler_cycle_duration_seconds")
                 .Help("Duration of one scheduling cycle (snapshot, actions, close)")
                 .Register(registry)
                 .Add({}, SecondsBuckets())),
      pending_jobs_(
          prometheus::BuildGauge()
              .Name("basalt_scheduler_pending_jobs")
              .Help("PodGroups in phase Pending or Inqueue at the start of the last cycle")
              .Register(registry)
              .Add({})),
      cycles_(prometheus::BuildCounter()
                  .Name("basalt_scheduler_cycles_total")
                  .Help("Scheduling cycles run")
                  .Register(registry)
                  .Add({})),
      bound_(prometheus::BuildCounter()
                 .Name("basalt_scheduler_pods_bound_total")
                 .Help("Pods bound to a node")
                 .Register(registry)
                 .Add({})),
      bind_failures_(prometheus::BuildCounter()
                         .Name("basalt_scheduler_bind_failures_total")
                         .Help("Binds that failed and were rolled back")
                         .Register(registry)
                         .Add({})),
      bind_latency_(prometheus::BuildHistogram()
                        .Name("basalt_scheduler_bind_duration_seconds")
                        .Help("From the decision to the API server's answer to pods/binding")
                        .Register(registry)
                        .Add({}, SecondsBuckets())),
      reloads_(prometheus::BuildCounter()
                   .Name("basalt_scheduler_config_reloads_total")
                   .Help("Scheduler configuration reloads by result")
                   .Register(registry)),
      reload_ok_(reloads_.Add({{"result", "success"}})),
      reload_failed_(reloads_.Add({{"result", "failure"}})),
      skipped_(prometheus::BuildGauge()
                   .Name("basalt_scheduler_config_skipped_names")
                   .Help("Actions and plugins named by the configuration in force that Basalt "
                         "does not implement and skips")
                   .Register(registry)),
      skipped_actions_(skipped_.Add({{"kind", "action"}})),
      skipped_plugins_(skipped_.Add({{"kind", "plugin"}})),
      volcano_(registry) {}

void SchedulerMetrics::ObserveCycle(Clock::Duration d, size_t pending_jobs) {
  cycle_.Observe(Seconds(d));
  cycles_.Increment();
  pending_jobs_.Set(static_cast<double>(pending_jobs));
}

void SchedulerMetrics::ObserveBind(const cache::BindResult& r) {
  volcano_.ObserveBindLatency(r.ok, r.latency);
  if (r.ok) {
    bound_.Increment();
    bind_latency_.Observe(Seconds(r.latency));
  } else {
    bind_failures_.Increment();
    volcano_.ObserveBindError();
  }
}

void SchedulerMetrics::ObserveReload(bool ok) { (ok ? reload_ok_ : reload_failed_).Increment(); }

void SchedulerMetrics::ObserveConfig(const SchedulerConfig& config) {
  skipped_actions_.Set(static_cast<double>(config.skipped_actions.size()));
  skipped_plugins_.Set(static_cast<double>(config.skipped_plugins.size()));
}

absl::Status RunSchedulingLoop(std::stop_token stop, const LoopDeps& deps) {
  constexpr auto kMaxIdle = std::chrono::seconds(30);
  Clock& clock = deps.clock != nullptr ? *deps.clock : *Clock::Real();
  uint64_t seen = 0;
  uint64_t cycle_number = 0;
  uint64_t arrivals_seen = 0;
  Clock::TimePoint last_end = clock.Now() - deps.period;
  Clock::TimePoint last_start = last_end;
  // When the next cycle may start: a period after the last one ended, or sooner for new work
  // (see LoopDeps::arrival_delay).
  auto next_start = [&]() {
    Clock::TimePoint at = last_end + deps.period;
    if (deps.arrival_delay > Clock::Duration::zero()) {
      const cache::ClusterState::Arrivals a = deps.state->arrivals();
      if (a.count != arrivals_seen) {
        const Clock::Duration gap = 2 * (last_end - last_start);
        at = std::min(at, std::max(a.first_since_snapshot + deps.arrival_delay, last_end + gap));
      }
    }
    return at;
  };
  while (!stop.stop_requested()) {
    // Wait for a change (or the idle limit), then until the next start, which a change during
    // the wait (an arrival) can bring forward.
    auto idle_left = kMaxIdle - (clock.Now() - last_start);
    if (idle_left > Clock::Duration::zero()) {
      deps.state->WaitForChange(seen, std::chrono::ceil<std::chrono::milliseconds>(idle_left),
                                stop);
    }
    for (Clock::TimePoint at = next_start(); clock.Now() < at && !stop.stop_requested();
         at = next_start()) {
      deps.state->WaitForChange(deps.state->generation(),
                                std::chrono::ceil<std::chrono::milliseconds>(at - clock.Now()),
                                stop);
    }
    if (stop.stop_requested()) break;
    last_start = clock.Now();
    cache::ClusterState::Snapshot snap = deps.state->TakeSnapshot();
    seen = snap.generation;
    arrivals_seen = snap.arrivals;
    size_t pending_jobs = 0;
    for (const auto& [id, job] : snap.cluster.jobs()) {
      PodGroupPhase p = job.podgroup_status.phase;
      if (p == PodGroupPhase::kPending || p == PodGroupPhase::kInqueue) ++pending_jobs;
    }
    SchedulerConfig config;
    {
      std::lock_guard<std::mutex> l(*deps.config_mu);
      config = deps.config->Current();
    }
    const Clock::SystemTimePoint wall = clock.WallNow();
    std::string uid = fmt::format(
        "cycle-{}-{}", cycle_number++,
        std::chrono::duration_cast<std::chrono::milliseconds>(wall.time_since_epoch()).count());
    CycleDeps cycle = deps.cycle;
    CycleReport report;
    if (deps.metrics != nullptr) cycle.report = &report;
    absl::Status s = RunCycleOn(snap.cluster, config, cycle, std::move(uid), wall);
    if (s.ok() && deps.metrics != nullptr) deps.metrics->ObserveReport(report, snap.cluster);
    // Handed back, the snapshot is updated in place next cycle instead of copied (decision 6).
    if (s.ok()) deps.state->ReturnSnapshot(std::move(snap.cluster), snap.handout);
    last_end = clock.Now();
    if (!s.ok()) BASALT_LOG_ERROR("Scheduling cycle failed", "error", MessageOf(s));
    if (deps.metrics != nullptr) deps.metrics->ObserveCycle(last_end - last_start, pending_jobs);
    BASALT_VLOG(
        4, "Cycle done", "generation", seen, "ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(last_end - last_start).count());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("cannot open {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status RunConfigWatcher(std::stop_token stop, const std::string& path, ConfigStore* config,
                              std::mutex* config_mu, cache::ClusterState* state,
                              SchedulerMetrics* metrics, std::chrono::milliseconds interval,
                              std::string initial, Clock* clock) {
  Clock& on = clock != nullptr ? *clock : *Clock::Real();
  std::string last = std::move(initial);
  bool have_last = !last.empty();
  bool warned_missing = false;
  while (!stop.stop_requested()) {
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      if (!warned_missing) {
        BASALT_LOG_WARNING("Cannot read the scheduler configuration; keeping the current one",
                           "path", path, "error", MessageOf(text.status()));
        warned_missing = true;
      }
    } else if (!have_last || *text != last) {
      warned_missing = false;
      absl::Status s;
      SchedulerConfig in_force;
      {
        std::lock_guard<std::mutex> l(*config_mu);
        s = config->Reload(*text);
        in_force = config->Current();
      }
      if (metrics != nullptr) metrics->ObserveConfig(in_force);
      if (s.ok()) {
        BASALT_LOG_INFO("Loaded the scheduler configuration", "path", path);
        state->Touch();
      } else {
        BASALT_LOG_ERROR("Invalid scheduler configuration; keeping the previous one", "path", path,
                         "error", MessageOf(s));
      }
      if (metrics != nullptr) metrics->ObserveReload(s.ok());
      last = *std::move(text);
      have_last = true;
    }
    if (!SleepUntil(on, stop, on.Now() + interval)) break;
  }
  return absl::OkStatus();
}

}  // namespace basalt::sched::app
