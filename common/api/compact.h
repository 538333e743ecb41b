#pragma once
// Compact value types holding only what the scheduler needs of a Pod or a Node, without the
// JSON document, so a cache of 50k pods stays small (a few hundred bytes per pod). Build them
// from the typed views with ToCompactPod / ToCompactNode; the full objects can be dropped
// afterwards. Plain values; copy freely. Thread-compatible.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/api/core.h"
#include "common/api/gpu_attributes.h"
#include "common/api/time.h"
#include "common/resource/resource_list.h"

namespace basalt::api {

enum class PodPhase : uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };

// "Pending" -> kPending ...; anything else (including "") -> kUnknown, except "" which is
// treated as kPending (a pod the API server has not given a phase yet).
PodPhase ParsePodPhase(std::string_view phase);
std::string_view PodPhaseName(PodPhase phase);

struct CompactPod {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string node_name;
  std::string nominated_node_name;
  std::string scheduler_name;
  std::string group_name;  // scheduling.k8s.io/group-name annotation
  std::string node_group;  // scheduling.volcano.sh/node-group annotation
  std::string owner_uid;   // uid of the controller ownerReference, "" if none
  std::string owner_kind;  // kind of the controller ownerReference
  std::string task_spec;   // volcano.sh/task-spec label ("" if none)
  PodPhase phase = PodPhase::kPending;
  bool terminating = false;  // deletionTimestamp set
  int32_t priority = 0;      // spec.priority (0 when absent)
  std::string priority_class_name;
  std::string preemption_policy;
  // volcano.sh/preemptable, annotation first, then label, as Go's strconv.ParseBool reads it:
  // absent -> true; a value that does not parse -> false (Volcano's GetPodPreemptable).
  bool preemptable = true;
  resource::ResourceList request;  // effective pod request (see Pod::EffectiveRequest)
  std::vector<std::pair<std::string, std::string>> labels;         // sorted by key
  std::vector<std::pair<std::string, std::string>> node_selector;  // sorted by key
  std::vector<Toleration> tolerations;
  std::string affinity_json;  // "" when the pod has no affinity
  // Host ports the pod holds on its node while it runs: those of the regular containers and of
  // restartable init containers (sidecars), as kube-scheduler's NodePorts counts them; plain
  // init containers have exited before the app containers bind their ports.
  std::vector<HostPort> host_ports;
  std::optional<Time> creation_timestamp;
  // The gpu.basalt.dev/ annotations, parsed; null when the pod has none (most pods).
  std::shared_ptr<const GpuAttributes> gpu_attributes;

  std::string Key() const { return namespace_name + "/" + name; }
};

struct CompactNode {
  std::string name;
  std::string uid;
  std::string resource_version;
  resource::ResourceList allocatable;
  resource::ResourceList capacity;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by key
  std::vector<Taint> taints;
  bool unschedulable = false;
  bool ready = false;
  // The vGPU device registration (annotation volcano.sh/node-vgpu-register) while it is in
  // force: "" if absent, or if the device plugin's handshake (volcano.sh/node-vgpu-handshake) is
  // absent or says "Deleted", as Volcano reads it.
  std::string vgpu_register;
};

CompactPod ToCompactPod(const Pod& pod);
CompactNode ToCompactNode(const Node& node);

}  // namespace basalt::api
