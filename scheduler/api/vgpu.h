#pragma once
// vGPU sharing as Volcano's deviceshare plugin does it for HAMi's volcano-vgpu-device-plugin:
// the node's physical GPUs as the device plugin registers them (annotation
// volcano.sh/node-vgpu-register), a pod's per-container vGPU request (limits
// volcano.sh/vgpu-number, vgpu-memory, vgpu-memory-percentage, vgpu-cores), and the assignment
// the scheduler writes into the pod for the device plugin (annotation volcano.sh/vgpu-ids-new).
//
// Wire formats (Volcano v1.15.1, read from its sources; Basalt writes and reads the same text):
//   register:   "<uuid>,<shares>,<memory MiB>,<type>,<healthy>[,<mode>]:" repeated, one per GPU
//   assignment: per container "<uuid>,<type>,<memory MiB>,<cores>:" repeated, containers
//               joined by ";"
//
// VgpuDevices keeps, for each physical GPU, how many vGPUs, how much memory and how many cores
// (percent) are taken and by which PodGroups. Value types; not thread-safe for mutation.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/gpu_devices.h"

namespace basalt::sched {

inline constexpr std::string_view kVgpuNumber = "volcano.sh/vgpu-number";
inline constexpr std::string_view kVgpuMemory = "volcano.sh/vgpu-memory";
inline constexpr std::string_view kVgpuMemoryPercentage = "volcano.sh/vgpu-memory-percentage";
inline constexpr std::string_view kVgpuCores = "volcano.sh/vgpu-cores";
// Node annotations written by the device plugin.
inline constexpr std::string_view kVgpuRegisterAnnotation = "volcano.sh/node-vgpu-register";
inline constexpr std::string_view kVgpuHandshakeAnnotation = "volcano.sh/node-vgpu-handshake";
// Pod annotations written by the scheduler with the binding, read by the device plugin.
inline constexpr std::string_view kVgpuIdsAnnotation = "volcano.sh/vgpu-ids-new";
inline constexpr std::string_view kVgpuDevicesToAllocateAnnotation =
    "volcano.sh/devices-to-allocate";
inline constexpr std::string_view kVgpuNodeAnnotation = "volcano.sh/vgpu-node";
inline constexpr std::string_view kVgpuTimeAnnotation = "volcano.sh/vgpu-time";
inline constexpr std::string_view kVgpuBindPhaseAnnotation = "volcano.sh/bind-phase";
inline constexpr std::string_view kVgpuBindTimeAnnotation = "volcano.sh/bind-time";
// Pod annotations a user sets.
inline constexpr std::string_view kVgpuPodGroupPolicyAnnotation = "volcano.sh/vgpu-podgroup-policy";
inline constexpr std::string_view kVgpuModeAnnotation = "volcano.sh/vgpu-mode";
inline constexpr std::string_view kUseGpuTypeAnnotation = "nvidia.com/use-gputype";
inline constexpr std::string_view kNoUseGpuTypeAnnotation = "nvidia.com/nouse-gputype";

inline constexpr std::string_view kVgpuModeHamiCore = "hami-core";
inline constexpr int32_t kVgpuNoPercentage = 101;  // memory-percentage not given

// One physical GPU of a node and what the tasks placed on it take.
struct VgpuDevice {
  std::string uuid;
  int32_t shares = 0;   // how many vGPUs it may host (the device plugin's split count)
  int64_t memory = 0;   // MiB
  std::string type;     // e.g. "NVIDIA-NVIDIA A100-SXM4-80GB"
  bool healthy = true;  // Basalt places nothing on an unhealthy GPU
  std::string mode = std::string(kVgpuModeHamiCore);

  int32_t used_shares = 0;
  int64_t used_memory = 0;
  int32_t used_cores = 0;  // percent of the GPU's cores, 0..100
  // PodGroup key ("<ns>/<group>") -> tasks of that group on this GPU (for the spread policy).
  std::map<std::string, int32_t> groups;
};

// Parses the register annotation. kInvalidArgument names the malformed entry.
absl::StatusOr<std::vector<VgpuDevice>> ParseVgpuRegister(std::string_view text);
// The register annotation for `devices` (what the device plugin writes; for tests and fakes).
std::string EncodeVgpuRegister(const std::vector<VgpuDevice>& devices);

// What one container asks: `number` GPUs, each with `memory` MiB (or `memory_percentage` of the
// GPU's memory; neither given: the whole GPU) and `cores` percent of its cores.
struct VgpuContainerRequest {
  int32_t number = 1;
  int64_t memory = 0;
  int32_t memory_percentage = kVgpuNoPercentage;
  int32_t cores = 0;
  friend bool operator==(const VgpuContainerRequest&, const VgpuContainerRequest&) = default;
};

struct VgpuRequest {
  std::vector<VgpuContainerRequest> containers;  // containers with a vGPU request, in order
  std::string group_key;                 // "<ns>/<podgroup>" of the pod, "" outside any PodGroup
  bool spread = false;                   // volcano.sh/vgpu-podgroup-policy: spread
  std::string mode;                      // volcano.sh/vgpu-mode ("" = any)
  std::vector<std::string> use_types;    // nvidia.com/use-gputype (substrings, any matches)
  std::vector<std::string> nouse_types;  // nvidia.com/nouse-gputype
  bool Empty() const { return containers.empty(); }
  // Total vGPUs asked (the volcano.sh/vgpu-number the node's capacity counts).
  int64_t TotalNumber() const;
};

// What one container got on one GPU.
struct VgpuContainerDevice {
  std::string uuid;
  std::string type = "NVIDIA";
  int64_t memory = 0;
  int32_t cores = 0;
  friend bool operator==(const VgpuContainerDevice&, const VgpuContainerDevice&) = default;
};
// Per container (in the order of VgpuRequest::containers), the GPUs it got.
using VgpuAssignment = std::vector<std::vector<VgpuContainerDevice>>;

std::string EncodeVgpuAssignment(const VgpuAssignment& assignment);
// Empty text decodes to an empty assignment. kInvalidArgument names a malformed entry.
absl::StatusOr<VgpuAssignment> DecodeVgpuAssignment(std::string_view text);

// How a node's GPUs are chosen for a task: binpack fills the GPU with the least memory left
// first; spread takes the GPU with the fewest vGPUs first (deviceshare.SchedulePolicy).
enum class VgpuPolicy { kBinpack, kSpread };

// The outcome of fitting a request on a node's GPUs.
struct VgpuFit {
  bool ok = false;
  VgpuAssignment assignment;
  // When !ok: why, naming the resource ("Insufficient volcano.sh/vgpu-memory"), and whether it
  // could fit if the node's GPUs were all free (false: waiting or preempting cannot help).
  std::string reason;
  bool resolvable = true;
  // Volcano's device score for the GPUs chosen: binpack 100 x used/total memory after the
  // placement, summed; spread 100 for each GPU that was idle.
  double score = 0;
};

// The vGPU choice hook (as GpuChoiceCost): the cost of the node's devices after a container
// takes a candidate GPU; when set, Fit tries the GPUs in order of least cost (ties: the policy's
// order) instead of the policy's order alone.
using VgpuChoiceCost =
    std::function<double(const std::vector<VgpuDevice>& after, const HostLeft& left)>;

class VgpuDevices {
 public:
  VgpuDevices() = default;
  explicit VgpuDevices(std::vector<VgpuDevice> devices) : devices_(std::move(devices)) {}

  bool empty() const { return devices_.empty(); }
  const std::vector<VgpuDevice>& devices() const { return devices_; }
  VgpuPolicy policy() const { return policy_; }
  void set_policy(VgpuPolicy p) { policy_ = p; }

  // Chooses GPUs for every container of `req` (a GPU serves a container at most once; the
  // containers of one pod see each other's share), in the order of policy().
  // With a choice cost set, `left` is what the placement leaves of the node's CPU and memory.
  VgpuFit Fit(const VgpuRequest& req, const HostLeft& left = {}) const;
  void set_choice_cost(std::shared_ptr<const VgpuChoiceCost> cost) { cost_ = std::move(cost); }
  // True if every GPU of `assignment` is on this node and still has room for its part.
  bool Holds(const VgpuAssignment& assignment) const;
  // Takes (sign > 0) or gives back (sign < 0) the assignment's shares on the GPUs it names,
  // recording `group_key` on them. Parts naming unknown GPUs are ignored.
  void Account(const VgpuAssignment& assignment, const std::string& group_key, int sign);

 private:
  std::vector<VgpuDevice> devices_;
  VgpuPolicy policy_ = VgpuPolicy::kBinpack;
  std::shared_ptr<const VgpuChoiceCost> cost_;
};

}  // namespace basalt::sched
