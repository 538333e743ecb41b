#include "common/api/compact.h"

#include <algorithm>

#include "common/api/batch.h"

namespace basalt::api {

PodPhase ParsePodPhase(std::string_view phase) {
  if (phase == "Pending" || phase.empty()) return PodPhase::kPending;
  if (phase == "Running") return PodPhase::kRunning;
  if (phase == "Succeeded") return PodPhase::kSucceeded;
  if (phase == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

std::string_view PodPhaseName(PodPhase phase) {
  switch (phase) {
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
    case PodPhase::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

CompactPod ToCompactPod(const Pod& pod) {
  CompactPod c;
  c.namespace_name = std::string(pod.namespace_name());
  c.name = std::string(pod.name());
  c.uid = std::string(pod.uid());
  c.resource_version = std::string(pod.resource_version());
  c.node_name = pod.spec().node_name;
  c.nominated_node_name = pod.status().nominated_node_name;
  c.scheduler_name = pod.spec().scheduler_name;
  c.group_name = std::string(pod.GroupName());
  c.node_group = std::string(pod.annotation(kNodeGroupAnnotation).value_or(std::string_view()));
  if (auto owner = pod.controller_ref()) {
    c.owner_uid = std::move(owner->uid);
    c.owner_kind = std::move(owner->kind);
  }
  c.task_spec = std::string(pod.label(kTaskSpecKey).value_or(std::string_view()));
  c.phase = ParsePodPhase(pod.status().phase);
  c.terminating = pod.deletion_timestamp().has_value();
  c.priority = pod.spec().priority.value_or(0);
  c.priority_class_name = pod.spec().priority_class_name;
  c.preemption_policy = pod.spec().preemption_policy;
  std::optional<std::string_view> preemptable = pod.annotation(kPreemptableKey);
  if (!preemptable.has_value()) preemptable = pod.label(kPreemptableKey);
  if (preemptable.has_value()) {
    static constexpr std::string_view kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
    c.preemptable = std::find(std::begin(kTrue), std::end(kTrue), *preemptable) != std::end(kTrue);
  }
  c.request = pod.EffectiveRequest();
  StringMap labels = pod.labels();
  c.labels.assign(labels.begin(), labels.end());
  for (const Container& init : pod.spec().init_containers) {
    if (!init.restartable) continue;
    c.host_ports.insert(c.host_ports.end(), init.host_ports.begin(), init.host_ports.end());
  }
  for (const Container& container : pod.spec().containers) {
    c.host_ports.insert(c.host_ports.end(), container.host_ports.begin(),
                        container.host_ports.end());
  }
  c.node_selector.assign(pod.spec().node_selector.begin(), pod.spec().node_selector.end());
  c.tolerations = pod.spec().tolerations;
  c.affinity_json = pod.spec().affinity_json;
  c.creation_timestamp = pod.creation_timestamp();
  std::vector<std::pair<std::string, std::string>> gpu;
  for (auto& [key, value] : pod.annotations()) {
    if (std::string_view(key).starts_with(kGpuAttributePrefix)) gpu.emplace_back(key, value);
  }
  if (!gpu.empty()) {
    c.gpu_attributes = std::make_shared<const GpuAttributes>(ParseGpuAttributes(gpu).attributes);
  }
  return c;
}

CompactNode ToCompactNode(const Node& node) {
  CompactNode c;
  c.name = std::string(node.name());
  c.uid = std::string(node.uid());
  c.resource_version = std::string(node.resource_version());
  c.allocatable = node.allocatable();
  c.capacity = node.capacity();
  StringMap labels = node.labels();
  c.labels.assign(labels.begin(), labels.end());
  c.taints = node.taints();
  c.unschedulable = node.unschedulable();
  c.ready = node.Ready();
  if (std::optional<std::string_view> reg = node.annotation("volcano.sh/node-vgpu-register")) {
    std::optional<std::string_view> hs = node.annotation("volcano.sh/node-vgpu-handshake");
    if (hs.has_value() && hs->find("Deleted") == std::string_view::npos) c.vgpu_register = *reg;
  }
  return c;
}

}  // namespace basalt::api
