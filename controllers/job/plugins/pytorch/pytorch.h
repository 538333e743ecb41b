#pragma once
// The pytorch job plugin: torch.distributed rendezvous through environment variables. Every
// container of the master and worker tasks' pods gets MASTER_ADDR (the DNS name of master pod
// 0), MASTER_PORT, WORLD_SIZE (master replicas + worker replicas) and RANK (0 on the master,
// index + 1 on workers) and exposes containerPort `pytorchjob-port`. With
// --wait-master-enabled, worker pods first run an init container `wait-for-master` that waits
// (at most --wait-master-timeout seconds) until the master port accepts connections. A job
// without the master task is left alone. Relies on the svc plugin for DNS.
//
// Flags: --master (master), --worker (worker), --port (23456), --wait-master-enabled (false),
// --wait-master-timeout (300), --wait-master-image (busybox:1.36.1).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kPytorchPluginName = api::kPytorchPlugin;
inline constexpr std::string_view kPytorchPortName = "pytorchjob-port";
inline constexpr std::string_view kWaitForMasterName = "wait-for-master";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewPytorchPlugin(const std::vector<std::string>& args);

}  // namespace basalt::controllers
