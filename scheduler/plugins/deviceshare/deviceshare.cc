#include "scheduler/plugins/deviceshare/deviceshare.h"

#include "fmt/format.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

Outcome CheckGpuDevices(const TaskInfo& task, const NodeInfo& node) {
  if (task.gpu.Empty()) return Outcome::Success();
  const std::string plugin(kDeviceSharePluginName);
  if (node.gpus().empty()) return Outcome::Unresolvable(plugin, "node has no GPU devices");
  if (!task.gpu.AllowsModel(node.gpus().model())) {
    return Outcome::Unresolvable(plugin,
                                 fmt::format("GPU model {} not requested", node.gpus().model()));
  }
  if (!node.gpus().Fits(task.gpu)) {
    return Outcome::Unschedulable(
        plugin, fmt::format("fewer than {} GPUs with {}m free", task.gpu.count, task.gpu.milli));
  }
  return Outcome::Success();
}

namespace {

class DeviceSharePlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kDeviceSharePluginName; }
  void OnSessionOpen(Session& ssn) override {
    ssn.AddPredicateFn(Name(), [](const TaskInfo& task, const NodeInfo& node) {
      return CheckGpuDevices(task, node);
    });
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewDeviceSharePlugin(const Arguments& /*args*/) {
  return std::make_unique<DeviceSharePlugin>();
}

}  // namespace basalt::sched
