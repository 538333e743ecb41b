#include "scheduler/framework/framework.h"

#include <chrono>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched {

absl::Status RunCycle(ClusterInfo snapshot, const SchedulerConfig& config, const CycleDeps& deps,
                      std::string session_uid, Timestamp now) {
  return RunCycleOn(snapshot, config, deps, std::move(session_uid), now);
}

absl::Status RunCycleOn(ClusterInfo& snapshot, const SchedulerConfig& config, const CycleDeps& deps,
                        std::string session_uid, Timestamp now) {
  std::vector<std::unique_ptr<Action>> actions;
  for (const auto& name : config.actions) {
    const ActionFactory* factory = deps.actions->Find(name);
    if (factory == nullptr)
      return absl::InvalidArgumentError(fmt::format("unknown action \"{}\"", name));
    actions.push_back((*factory)());
  }
  if (deps.report != nullptr) *deps.report = CycleReport();
  SessionOptions options{std::move(session_uid), now,        deps.binder, deps.evictor,
                         deps.node_sampler,      deps.report};
  BASALT_ASSIGN_OR_RETURN(
      std::unique_ptr<Session> ssn,
      Session::Open(std::move(snapshot), config, *deps.plugins, std::move(options)));
  for (size_t i = 0; i < actions.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    actions[i]->Execute(*ssn);
    if (deps.report != nullptr) {
      deps.report->actions.push_back(
          CycleReport::Timing{config.actions[i], std::chrono::steady_clock::now() - start});
    }
  }
  ssn->Close(deps.sink);
  snapshot = std::move(ssn->cluster());
  return absl::OkStatus();
}

absl::StatusOr<SchedulerConfig> LoadSchedulerConfig(std::string_view yaml,
                                                    const PluginRegistry& plugins,
                                                    const ActionRegistry& actions) {
  BASALT_ASSIGN_OR_RETURN(SchedulerConfig config, ParseSchedulerConfig(yaml));
  SkipUnknownNames(config, actions.Names(), plugins.Names());
  BASALT_RETURN_IF_ERROR(ValidateSchedulerConfig(config, actions.Names(), plugins.Names()));
  for (const auto& tier : config.tiers) {
    for (const auto& option : tier.plugins) {
      auto plugin = (*plugins.Find(option.name))(option.arguments);
      if (!plugin.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("plugin {}: {}", option.name, MessageOf(plugin.status())));
      }
    }
  }
  return config;
}

}  // namespace basalt::sched
