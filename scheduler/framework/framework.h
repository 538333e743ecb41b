#pragma once
// RunCycle runs one scheduling cycle: open a session on `snapshot`, run the configured actions
// in order, close the session (writing status changes to `sink`). This is what the scheduler's
// main loop calls every --schedule-period, and what action-level tests drive.

#include <string>

#include "absl/status/status.h"
#include "scheduler/api/cluster_info.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/cycle_report.h"
#include "scheduler/framework/interfaces.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

struct CycleDeps {
  const PluginRegistry* plugins = nullptr;
  const ActionRegistry* actions = nullptr;
  Binder* binder = nullptr;
  Evictor* evictor = nullptr;
  StatusSink* sink = nullptr;
  NodeSampler* node_sampler = nullptr;  // may be null: default sampling options
  // May be null. When set, RunCycleOn fills it (it is cleared first): timings, counts, queues.
  CycleReport* report = nullptr;
};

// Returns kInvalidArgument if the config names an unknown action or plugin, or a plugin's
// arguments do not parse; nothing is scheduled then.
absl::Status RunCycle(ClusterInfo snapshot, const SchedulerConfig& config, const CycleDeps& deps,
                      std::string session_uid, Timestamp now);
// The same on a snapshot the caller keeps: on return `snapshot` holds the session's final state
// (what the cache's incremental snapshots update for the next cycle).
absl::Status RunCycleOn(ClusterInfo& snapshot, const SchedulerConfig& config, const CycleDeps& deps,
                        std::string session_uid, Timestamp now);

// Parses a config, skips the actions and plugins the registries lack (SkipUnknownNames: the
// result lists them), validates the rest, and builds each plugin once so that bad arguments are
// reported at load time rather than at the first cycle.
absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(std::string_view yaml,
                                                    const PluginRegistry& plugins,
                                                    const ActionRegistry& actions);

}  // namespace basalt::sched
