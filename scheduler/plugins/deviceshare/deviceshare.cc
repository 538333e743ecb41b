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

Outcome CheckVgpuDevices(const TaskInfo& task, const NodeInfo& node) {
  if (task.vgpu == nullptr || task.vgpu->Empty()) return Outcome::Success();
  const std::string plugin(kDeviceSharePluginName);
  if (node.vgpus().empty()) {
    return Outcome::Unresolvable(
        plugin, "node has no vGPU devices registered (volcano.sh/node-vgpu-register)");
  }
  VgpuFit fit = node.vgpus().Fit(*task.vgpu);
  if (fit.ok) return Outcome::Success();
  return fit.resolvable ? Outcome::Unschedulable(plugin, fit.reason)
                        : Outcome::Unresolvable(plugin, fit.reason);
}

namespace {

struct DeviceShareArgs {
  bool vgpu = false;
  bool policy_set = false;
  VgpuPolicy policy = VgpuPolicy::kBinpack;
  double weight = 0;
};

class DeviceSharePlugin final : public Plugin {
 public:
  explicit DeviceSharePlugin(DeviceShareArgs args) : args_(args) {}
  std::string_view Name() const override { return kDeviceSharePluginName; }
  void OnSessionOpen(Session& ssn) override {
    for (auto& [name, node] : ssn.nodes()) {
      if (!node.vgpus().empty()) node.vgpus().set_policy(args_.policy);
    }
    const bool vgpu = args_.vgpu;
    ssn.AddPredicateFn(Name(), [vgpu](const TaskInfo& task, const NodeInfo& node) {
      Outcome o = CheckGpuDevices(task, node);
      if (!o.ok() || task.vgpu == nullptr || task.vgpu->Empty()) return o;
      if (!vgpu) {
        return Outcome::Unresolvable(std::string(kDeviceSharePluginName),
                                     "vGPU sharing is off (deviceshare.VGPUEnable is not true)");
      }
      return CheckVgpuDevices(task, node);
    });
    if (args_.vgpu && args_.policy_set && args_.weight > 0) {
      const double weight = args_.weight;
      ssn.AddNodeOrderFn(Name(), [weight](const TaskInfo& task, const NodeInfo& node) {
        if (task.vgpu == nullptr || task.vgpu->Empty() || node.vgpus().empty()) return 0.0;
        VgpuFit fit = node.vgpus().Fit(*task.vgpu);
        return fit.ok ? fit.score * weight : 0.0;
      });
    }
  }

 private:
  DeviceShareArgs args_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewDeviceSharePlugin(const Arguments& args) {
  DeviceShareArgs a;
  for (std::string_view key : {"deviceshare.GPUSharingEnable", "deviceshare.GPUNumberEnable"}) {
    absl::StatusOr<bool> on = args.GetBool(key, false);
    if (!on.ok()) return on.status();
    if (*on) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: Volcano's gpushare mode (volcano.sh/gpu-memory, volcano.sh/gpu-number) is not "
          "supported; use deviceshare.VGPUEnable (volcano.sh/vgpu-*)",
          key));
    }
  }
  absl::StatusOr<bool> vgpu = args.GetBool("deviceshare.VGPUEnable", false);
  if (!vgpu.ok()) return vgpu.status();
  a.vgpu = *vgpu;
  const std::string policy = args.GetString("deviceshare.SchedulePolicy", "");
  if (policy == "spread") {
    a.policy = VgpuPolicy::kSpread;
    a.policy_set = true;
  } else if (policy == "binpack") {
    a.policy_set = true;
  } else if (!policy.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("deviceshare.SchedulePolicy: \"{}\" is not binpack or spread", policy));
  }
  absl::StatusOr<double> weight = args.GetFloat("deviceshare.ScheduleWeight", 0);
  if (!weight.ok()) return weight.status();
  a.weight = *weight;
  return std::make_unique<DeviceSharePlugin>(a);
}

}  // namespace basalt::sched
