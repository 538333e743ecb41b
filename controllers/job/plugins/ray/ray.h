#pragma once
// The ray job plugin (Volcano's distributed-framework/ray): a Ray cluster of a head task and a
// worker task.
//   - OnPodCreate: the head task's container --headContainer gets containerPorts gcs
//     (--port), dashboard (--dashboardPort) and client-server (--clientPort) unless those
//     numbers are already exposed, and the command
//     `sh -c "ray start --head --block --dashboard-host=0.0.0.0 --port=P --dashboard-port=D
//     --ray-client-server-port=C"`; the worker task's container --workerContainer gets
//     `sh -c "ray start --block --address=<head pod 0 DNS name>:P"` (the head pod's
//     <hostname>.<subdomain>, served by the svc plugin's headless Service, which the webhook
//     adds for ray). The command replaces the template's, as in Volcano. A job without the
//     head task is a PluginError on every pod (Volcano's "doesn't have head task").
//   - OnJobAdd: a Service `<job>-head` selecting the head task's pods, ports gcs, dashboard
//     and client-server (TCP, targetPort by name); OnJobDelete deletes it.
// Deliberate difference: Volcano names that Service `<job>`, the name of the svc plugin's
// headless Service; which of the two gets created then depends on Go's map order, and without
// the headless one the workers cannot resolve the head. Basalt keeps both.
//
// Flags: --head (head), --headContainer (head), --worker (worker), --workerContainer (worker),
// --port (6379), --dashboardPort (8265), --clientPort (10001).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kRayPluginName = api::kRayPlugin;
inline constexpr std::string_view kRayGcsPortName = "gcs";
inline constexpr std::string_view kRayDashboardPortName = "dashboard";
inline constexpr std::string_view kRayClientPortName = "client-server";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewRayPlugin(const std::vector<std::string>& args);

// `<job>-head`.
std::string RayHeadServiceName(std::string_view job);

}  // namespace basalt::controllers
