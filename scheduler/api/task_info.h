#pragma once
// TaskInfo is the scheduler's view of one pod: its request, placement constraints in a
// pre-parsed compact form, and its status in the session. Value type; a session owns its copy.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/api/resource.h"

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
};

// A node selector requirement (matchExpressions entry).
struct NodeSelectorRequirement {
  enum class Operator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Operator op = Operator::kIn;
  std::vector<std::string> values;
  bool Matches(const std::map<std::string, std::string>& labels) const;
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

struct HostPort {
  std::string protocol = "TCP";
  std::string host_ip;  // empty = 0.0.0.0
  int32_t port = 0;
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
  std::string node_name;
  std::string priority_class_name;
  TaskStatus status = TaskStatus::kPending;
  int32_t priority = 1;
  bool preemptable = true;
  Timestamp creation_time{};

  Resource resreq;       // sum of regular containers + overhead
  Resource init_resreq;  // max(resreq, each init container): what must fit to start

  std::map<std::string, std::string> node_selector;
  NodeAffinity affinity;
  std::vector<Toleration> tolerations;
  std::vector<HostPort> host_ports;

  // The condition the pod carries now (from the cache), nullopt if none.
  std::optional<PodScheduledCondition> scheduled_condition;
  // Session-scoped.
  std::optional<LastTransaction> last_transaction;

  bool BestEffort() const { return init_resreq.IsEmpty(); }
  // "<namespace>/<name>"
  std::string Key() const { return namespace_name + "/" + name; }
};

// The numeric index of a pod name "<job>-<task>-<index>" (>= 3 dash-separated parts), or -1.
int64_t PodNameIndex(std::string_view name);

}  // namespace basalt::sched
