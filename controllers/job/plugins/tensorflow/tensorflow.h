#pragma once
// The tensorflow job plugin: every container of a pod whose task is one of the TensorFlow roles
// (ps, worker, chief, evaluator — task names set by flags) gets TF_CONFIG:
//   {"cluster":{"ps":[...],"worker":[...],"chief":[...],"evaluator":[...]},
//    "task":{"type":"<role>","index":<pod index>}}
// with `<host>.<subdomain>:<port>` entries for the roles whose task exists. Skipped for a job of
// a single task with one replica (nothing to distribute). Relies on the svc plugin for DNS.
//
// Flags: --ps (ps), --worker (worker), --chief (chief), --evaluator (evaluator), --port (2222).

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kTensorflowPluginName = api::kTensorflowPlugin;
inline constexpr std::string_view kTfConfigEnv = "TF_CONFIG";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewTensorflowPlugin(
    const std::vector<std::string>& args);

}  // namespace basalt::controllers
