#pragma once
// conformance: never evicts critical pods (priorityClassName system-cluster-critical or
// system-node-critical, or anything in kube-system).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kConformancePluginName = "conformance";

absl::StatusOr<std::unique_ptr<Plugin>> NewConformancePlugin(const Arguments& args);

}  // namespace basalt::sched
