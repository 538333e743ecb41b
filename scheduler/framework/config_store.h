#pragma once
// ConfigStore holds the scheduler configuration in force. It starts with Volcano's built-in
// default; Reload()/LoadFile() parse and validate new text against the registries (building
// every plugin once to check its arguments) and swap it in. Actions and plugins Basalt does not
// implement are skipped (the config lists them) and logged once per name for the store's life.
// An invalid file (YAML, shape or type error) keeps the previous
// configuration, as in Volcano, and the error says why. A cycle takes a copy with Current(), so a
// reload never tears a running cycle.
//
// Thread-safe. The registries are not owned and must outlive the store.

#include <set>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

class ConfigStore {
 public:
  ConfigStore(const PluginRegistry* plugins, const ActionRegistry* actions);
  ConfigStore(const ConfigStore&) = delete;
  ConfigStore& operator=(const ConfigStore&) = delete;

  // Returns kInvalidArgument (and keeps the current config) if `yaml` is not a valid config.
  absl::Status Reload(std::string_view yaml);
  // Reads `path` and reloads; kNotFound if it cannot be read.
  absl::Status LoadFile(const std::string& path);
  SchedulerConfig Current() const;

 private:
  const PluginRegistry* plugins_;
  const ActionRegistry* actions_;
  mutable absl::Mutex mu_;
  SchedulerConfig config_ ABSL_GUARDED_BY(mu_);
  std::set<std::string, std::less<>> logged_skips_ ABSL_GUARDED_BY(mu_);  // "action/x", "plugin/y"
};

}  // namespace basalt::sched
