#pragma once
// ConfigStore holds the scheduler configuration in force. It starts with Volcano's built-in
// default; Reload()/LoadFile() parse and validate new text against the registries (building
// every plugin once to check its arguments) and swap it in. An invalid file keeps the previous
// configuration, as in Volcano, and the error says why. A cycle takes a copy with Current(), so a
// reload never tears a running cycle.
//
// Thread-safe. The registries are not owned and must outlive the store.

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
};

}  // namespace basalt::sched
