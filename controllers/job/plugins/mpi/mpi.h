#pragma once
// The mpi job plugin: the master task's pods learn the worker hosts (env MPI_HOST, the
// comma-separated DNS names of the worker task's pods) and every container and init container
// exposes the ssh port as containerPort `mpijob-port`. Relies on the svc plugin for DNS and the
// ssh plugin for keys (the job webhook adds both when mpi is present).
//
// Flags: --master (master), --worker (worker), --port (22).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kMpiPluginName = api::kMpiPlugin;
inline constexpr std::string_view kMpiHostEnv = "MPI_HOST";
inline constexpr std::string_view kMpiPortName = "mpijob-port";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewMpiPlugin(const std::vector<std::string>& args);

}  // namespace basalt::controllers
