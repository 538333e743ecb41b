#pragma once
// OneCycle: the plugin tests' fixture for one scheduling cycle with a YAML configuration over a
// hand-built snapshot, the in-tree plugins and actions, recording the binds and the status
// writes and the evictions (RecordingBinder, RecordingStatusSink, RecordingEvictor). A test derives
// its own `Cycle` naming its configuration and adds its queries over BoundNodes().
//
// Thread-compatible; one OneCycle per test.

#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched::testing {

class OneCycle {
 public:
  // `config_yaml`: the configuration Run(ClusterInfo) parses (none: the test passes its own).
  explicit OneCycle(std::string_view config_yaml = "") : config_yaml_(config_yaml) {}

  // Runs one cycle (session "s1" at T(100)) on `c`; an error for a bad configuration or cycle.
  absl::Status Run(ClusterInfo c) {
    auto config = ParseSchedulerConfig(config_yaml_);
    if (!config.ok()) return config.status();
    return Run(std::move(c), *config);
  }
  absl::Status Run(ClusterInfo c, const SchedulerConfig& config) {
    PluginRegistry plugins = NewInTreeRegistry();
    ActionRegistry actions = NewInTreeActionRegistry();
    CycleDeps deps{&plugins, &actions, &binder, &evictor, &sink};
    return RunCycle(std::move(c), config, deps, "s1", T(100));
  }

  // The node of each bound pod whose uid starts with "uid-<prefix>" (MakeTask's uids), one
  // entry per pod.
  std::multiset<std::string> BoundNodes(const std::string& prefix) const {
    std::multiset<std::string> out;
    for (const auto& [uid, node] : binder.Bound()) {
      if (uid.rfind("uid-" + prefix, 0) == 0) out.insert(node);
    }
    return out;
  }

  // The message of the last Unschedulable condition written for PodGroup `job_id` ("" if none).
  std::string Unschedulable(const std::string& job_id) const {
    const PodGroupStatusUpdate* pg = sink.LastPodGroup(job_id);
    if (pg == nullptr) return "";
    const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
    return cond == nullptr ? "" : cond->message;
  }

  RecordingBinder binder;
  RecordingEvictor evictor;
  RecordingStatusSink sink;

 private:
  std::string config_yaml_;
};

}  // namespace basalt::sched::testing
