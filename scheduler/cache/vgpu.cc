#include "scheduler/cache/vgpu.h"

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched::cache {
namespace {

// The container's value of `name` in limits, else in requests.
std::optional<int64_t> ContainerValue(const api::Container& c, std::string_view name) {
  if (c.limits.Has(name)) return c.limits.Get(name).Value();
  if (c.requests.Has(name)) return c.requests.Get(name).Value();
  return std::nullopt;
}

std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view item = s.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

}  // namespace

std::shared_ptr<const VgpuRequest> PodVgpuRequest(const api::Pod& pod) {
  auto req = std::make_shared<VgpuRequest>();
  for (const api::Container& c : pod.spec().containers) {
    std::optional<int64_t> number = ContainerValue(c, kVgpuNumber);
    std::optional<int64_t> memory = ContainerValue(c, kVgpuMemory);
    if (!number.has_value() && !memory.has_value()) continue;
    VgpuContainerRequest r;
    r.number = static_cast<int32_t>(number.value_or(1));
    r.memory = memory.value_or(0);
    if (std::optional<int64_t> pct = ContainerValue(c, kVgpuMemoryPercentage); pct.has_value()) {
      r.memory_percentage = static_cast<int32_t>(*pct);
    }
    r.cores = static_cast<int32_t>(ContainerValue(c, kVgpuCores).value_or(0));
    if (r.number <= 0) continue;
    req->containers.push_back(r);
  }
  if (req->containers.empty()) return nullptr;
  if (std::string_view group = pod.GroupName(); !group.empty()) {
    req->group_key = fmt::format("{}/{}", pod.namespace_name(), group);
  }
  req->spread = pod.annotation(kVgpuPodGroupPolicyAnnotation).value_or("") == "spread";
  req->mode = std::string(pod.annotation(kVgpuModeAnnotation).value_or(""));
  req->use_types = SplitList(pod.annotation(kUseGpuTypeAnnotation).value_or(""));
  req->nouse_types = SplitList(pod.annotation(kNoUseGpuTypeAnnotation).value_or(""));
  return req;
}

VgpuAssignment PodVgpuAssignment(const api::Pod& pod) {
  std::optional<std::string_view> ids = pod.annotation(kVgpuIdsAnnotation);
  if (!ids.has_value()) return {};
  absl::StatusOr<VgpuAssignment> a = DecodeVgpuAssignment(*ids);
  if (!a.ok()) {
    BASALT_LOG_WARNING("Ignoring a malformed vGPU assignment", "pod",
                       fmt::format("{}/{}", pod.namespace_name(), pod.name()), "error",
                       MessageOf(a.status()));
    return {};
  }
  return *std::move(a);
}

void StripPerDeviceVgpuResources(resource::ResourceList& request) {
  request.Remove(kVgpuMemory);
  request.Remove(kVgpuMemoryPercentage);
  request.Remove(kVgpuCores);
}

VgpuDevices NodeVgpuDevices(std::string_view node_name, std::string_view register_text) {
  if (register_text.empty()) return {};
  absl::StatusOr<std::vector<VgpuDevice>> devices = ParseVgpuRegister(register_text);
  if (!devices.ok()) {
    BASALT_LOG_WARNING("Ignoring the node's vGPU registration", "node", node_name, "error",
                       MessageOf(devices.status()));
    return {};
  }
  return VgpuDevices(*std::move(devices));
}

std::vector<std::pair<std::string, std::string>> VgpuBindAnnotations(
    const VgpuAssignment& assignment, std::string_view node, int64_t unix_seconds) {
  const std::string ids = EncodeVgpuAssignment(assignment);
  const std::string now = std::to_string(unix_seconds);
  return {
      {std::string(kVgpuIdsAnnotation), ids},
      {std::string(kVgpuDevicesToAllocateAnnotation), ids},
      {std::string(kVgpuNodeAnnotation), std::string(node)},
      {std::string(kVgpuTimeAnnotation), now},
      {std::string(kVgpuBindPhaseAnnotation), "allocating"},
      {std::string(kVgpuBindTimeAnnotation), now},
  };
}

}  // namespace basalt::sched::cache
