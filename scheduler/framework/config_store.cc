#include "scheduler/framework/config_store.h"

#include <fstream>
#include <sstream>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/framework/framework.h"

namespace basalt::sched {

ConfigStore::ConfigStore(const PluginRegistry* plugins, const ActionRegistry* actions)
    : plugins_(plugins), actions_(actions), config_(DefaultSchedulerConfig()) {}

absl::Status ConfigStore::Reload(std::string_view yaml) {
  BASALT_ASSIGN_OR_RETURN(SchedulerConfig config, LoadSchedulerConfig(yaml, *plugins_, *actions_));
  absl::MutexLock lock(&mu_);
  for (const auto& [kind, names] : {std::pair{"action", &config.skipped_actions},
                                    std::pair{"plugin", &config.skipped_plugins}}) {
    for (const std::string& name : *names) {
      if (logged_skips_.insert(fmt::format("{}/{}", kind, name)).second) {
        BASALT_LOG_WARNING(
            "Skipping what the scheduler configuration names but Basalt does not "
            "implement; the rest of the file is in force",
            "kind", kind, "name", name);
      }
    }
  }
  config_ = std::move(config);
  return absl::OkStatus();
}

absl::Status ConfigStore::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("cannot read scheduler config {}", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return Annotate(Reload(buf.str()), fmt::format("scheduler config {}", path));
}

SchedulerConfig ConfigStore::Current() const {
  absl::MutexLock lock(&mu_);
  return config_;
}

}  // namespace basalt::sched
