#pragma once
// TaskInfo is the scheduler's view of one pod: its request, placement constraints in a
// pre-parsed compact form, and its status in the session. Value type; a session owns its copy.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/gpu_attributes.h"
#include "scheduler/api/gpu_devices.h"
#include "scheduler/api/label_set.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/shared.h"
#include "scheduler/api/vgpu.h"

namespace basalt::sched {

using Timestamp = std::chrono::system_clock::time_point;

// Task statuses (Volcano's TaskStatus bit flags). Groups below are the reference's.
enum class TaskStatus : uint16_t {
  kPending = 1 << 0,
  kAllocated = 1 << 1,
  kPipelined = 1 << 2,
  kBinding = 1 << 3,
  kBound = 1 << 4,
  kRunning = 1 << 5,
  kReleasing = 1 << 6,
  kSucceeded = 1 << 7,
  kFailed = 1 << 8,
  kUnknown = 1 << 9,
};
inline constexpr TaskStatus kAllTaskStatuses[] = {
    TaskStatus::kPending, TaskStatus::kAllocated, TaskStatus::kPipelined, TaskStatus::kBinding,
    TaskStatus::kBound,   TaskStatus::kRunning,   TaskStatus::kReleasing, TaskStatus::kSucceeded,
    TaskStatus::kFailed,  TaskStatus::kUnknown};

std::string_view TaskStatusName(TaskStatus s);
// {Allocated, Binding, Bound, Running}: the task holds node and queue resources.
bool IsAllocatedStatus(TaskStatus s);
// {Running, Bound, Failed, Succeeded}.
bool IsScheduledStatus(TaskStatus s);
// {Failed, Succeeded}.
bool IsCompletedStatus(TaskStatus s);

// Kubernetes taint effects and toleration operators, as used by the predicates.
enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};
struct Toleration {
  std::string key;  // empty with kExists tolerates everything
  enum class Operator { kEqual, kExists } op = Operator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt tolerates every effect
  // True if this toleration tolerates `taint` (Kubernetes ToleratesTaint).
  bool Tolerates(const Taint& taint) const;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// A node selector requirement (matchExpressions entry).
struct NodeSelectorRequirement {
  enum class Operator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Operator op = Operator::kIn;
  std::vector<std::string> values;
  // Node labels (a map) or a pod's (LabelSet, through a LabelSelector).
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool Matches(const LabelSet& labels) const;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};
// Requirements ANDed; an empty term matches nothing (Kubernetes semantics).
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  // matchFields on metadata.name, the only field Kubernetes supports.
  std::vector<std::string> match_node_names;
  bool Matches(std::string_view node_name, const std::map<std::string, std::string>& labels) const;
};
struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};
struct NodeAffinity {
  // requiredDuringSchedulingIgnoredDuringExecution: terms ORed; nullopt = no requirement.
  std::optional<std::vector<NodeSelectorTerm>> required;
  std::vector<PreferredSchedulingTerm> preferred;
};

// A port a pod binds on its node. The cache fills the Kubernetes defaults in (protocol TCP,
// host IP 0.0.0.0), so equal ports compare equal.
struct HostPort {
  std::string protocol = "TCP";
  std::string host_ip = "0.0.0.0";  // "" is read as 0.0.0.0 too
  int32_t port = 0;

  // kube-scheduler's rule: same port and protocol, and the same host IP or either one being
  // 0.0.0.0 (every address).
  bool ConflictsWith(const HostPort& other) const;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

// A label selector (metav1.LabelSelector): matchLabels and matchExpressions ANDed; an empty
// selector matches every label set. Only In, NotIn, Exists and DoesNotExist are valid operators.
struct LabelSelector {
  std::vector<std::pair<std::string, std::string>> match_labels;
  std::vector<NodeSelectorRequirement> match_expressions;
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool Matches(const LabelSet& labels) const;
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// One pod (anti-)affinity term (v1.PodAffinityTerm), with its namespaces resolved at parse time.
struct PodAffinityTerm {
  // nullopt: no labelSelector, which matches no pod (Kubernetes semantics).
  std::optional<LabelSelector> selector;
  // The namespaces listed, plus the owning pod's own namespace when neither `namespaces` nor a
  // namespaceSelector is given.
  std::vector<std::string> namespaces;
  // namespaceSelector: {} selects every namespace. A non-empty one is evaluated against the
  // namespace's name label (kubernetes.io/metadata.name) only, as the scheduler does not watch
  // Namespaces; selectors on other namespace labels select nothing.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;

  // True if a pod in `pod_namespace` with `pod_labels` is one this term talks about.
  bool MatchesPod(const std::string& pod_namespace, const LabelSet& pod_labels) const;
  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};
struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};
// spec.affinity.podAffinity and podAntiAffinity, parsed once when the pod enters the cache and
// shared (immutably) by every snapshot's copy of the task.
struct PodAffinity {
  std::vector<PodAffinityTerm> required_affinity;
  std::vector<PodAffinityTerm> required_anti_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_affinity;
  std::vector<WeightedPodAffinityTerm> preferred_anti_affinity;
  bool Empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() &&
           preferred_affinity.empty() && preferred_anti_affinity.empty();
  }
  friend bool operator==(const PodAffinity&, const PodAffinity&) = default;
};

// What the last discarded transaction of a task was; drives the "Schedulable" pod message.
struct LastTransaction {
  TaskStatus status = TaskStatus::kPending;
  std::string node_name;
};

// The PodScheduled=False condition currently on the pod, so close only writes changes.
struct PodScheduledCondition {
  std::string reason;
  std::string message;
  std::string nominated_node_name;
  friend bool operator==(const PodScheduledCondition&, const PodScheduledCondition&) = default;
};

struct TaskInfo {
  std::string uid;
  std::string name;
  std::string namespace_name;
  std::string job_id;  // "<namespace>/<podgroup>", empty for pods outside any PodGroup
  std::string role;    // annotation volcano.sh/task-spec
  // Annotation scheduling.volcano.sh/node-group: only nodes of this node group (nodegroup).
  std::string node_group;
  std::string node_name;
  std::string priority_class_name;
  TaskStatus status = TaskStatus::kPending;
  int32_t priority = 1;
  // The pod's volcano.sh/preemptable (annotation, then label; absent: true). preempt and reclaim
  // never pick a task that is not preemptable.
  bool preemptable = true;
  // spec.preemptionPolicy: Never: the task waits for free capacity and never evicts anything.
  bool preempt_never = false;
  Timestamp creation_time{};

  Resource resreq;       // sum of regular containers + overhead
  Resource init_resreq;  // max(resreq, each init container): what must fit to start
  // Per-GPU request (whole GPUs, or a share of one GPU), checked against the node's GpuDevices.
  // resreq carries the same total as its nvidia.com/gpu scalar (count * milli milli-units).
  GpuRequest gpu;
  // The node's GPUs this task holds (indices into GpuDevices), set by NodeInfo when the task is
  // accounted on `gpu_node`. Mutable: it is node accounting state carried with the task, written
  // by NodeInfo through the const task reference it is given on removal.
  mutable std::vector<int32_t> gpu_ids;
  mutable std::string gpu_node;
  // vGPU request (volcano.sh/vgpu-*; null: none), shared by every snapshot's copy. The
  // volcano.sh/vgpu-number scalar stays in resreq; memory and cores are per GPU and live here.
  std::shared_ptr<const VgpuRequest> vgpu;
  // The GPUs it holds on `vgpu_node` (read from the pod's volcano.sh/vgpu-ids-new, or chosen by
  // NodeInfo when the task is placed). Mutable for the same reason as gpu_ids.
  mutable VgpuAssignment vgpu_assignment;
  mutable std::string vgpu_node;

  // The pod's placement inputs, immutable while the pod is unchanged: every copy of the task
  // (the cache's and each snapshot's) shares one value (Shared); assign to change one.
  Shared<LabelSet> labels;
  Shared<std::map<std::string, std::string>> node_selector;
  Shared<NodeAffinity> affinity;
  // Null when the pod has no pod (anti-)affinity terms.
  std::shared_ptr<const PodAffinity> pod_affinity;
  Shared<std::vector<Toleration>> tolerations;
  Shared<std::vector<HostPort>> host_ports;
  // The pod's gpu.basalt.dev/ annotations (gpuattributes plugin); null when it has none.
  std::shared_ptr<const api::GpuAttributes> gpu_attributes;

  // The condition the pod carries now (from the cache), nullopt if none; shared by the copies.
  SharedOptional<PodScheduledCondition> scheduled_condition;
  // Session-scoped.
  SharedOptional<LastTransaction> last_transaction;

  bool BestEffort() const { return init_resreq.IsEmpty(); }
  // "<namespace>/<name>"
  std::string Key() const { return namespace_name + "/" + name; }
};

// The numeric index of a pod name "<job>-<task>-<index>" (>= 3 dash-separated parts), or -1.
int64_t PodNameIndex(std::string_view name);

}  // namespace basalt::sched
