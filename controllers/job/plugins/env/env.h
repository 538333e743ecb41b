#pragma once
// The env job plugin: every container and init container of every pod gets VK_TASK_INDEX and
// VC_TASK_INDEX set to the pod's index within its task. No arguments, no objects.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kEnvPluginName = api::kEnvPlugin;
inline constexpr std::string_view kTaskIndexEnv = "VC_TASK_INDEX";
inline constexpr std::string_view kLegacyTaskIndexEnv = "VK_TASK_INDEX";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewEnvPlugin(const std::vector<std::string>& args);

}  // namespace basalt::controllers
