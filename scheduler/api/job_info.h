#pragma once
// JobInfo is the scheduler's view of one PodGroup (a gang) and the tasks (pods) that belong to
// it. It owns its tasks and keeps an index of them by status, the job's allocated resources and
// the per-task fit errors recorded during a session. Movable, not copyable (the status index
// and nodes point at the owned tasks, whose addresses are stable). Not thread-safe.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/api/fit_error.h"
#include "scheduler/api/hypernode.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"

namespace basalt::sched {

enum class PodGroupPhase { kPending, kInqueue, kRunning, kUnknown, kCompleted };
std::string_view PodGroupPhaseName(PodGroupPhase p);

inline constexpr std::string_view kConditionUnschedulable = "Unschedulable";
// Basalt: a waiting PodGroup's place in its queue, message "<position>/<waiting jobs>".
inline constexpr std::string_view kConditionQueuePosition = "QueuePosition";
inline constexpr std::string_view kReasonQueuePosition = "Waiting";
// A PodGroup younger than this gets no position (most jobs start within it); a position that
// moved is rewritten at most this often unless the PodGroup's phase changes.
inline constexpr std::chrono::seconds kQueuePositionDelay{5};
inline constexpr std::chrono::seconds kQueuePositionRefresh{10};
inline constexpr std::string_view kConditionScheduled = "Scheduled";
inline constexpr std::string_view kReasonNotEnoughResources = "NotEnoughResources";
inline constexpr std::string_view kReasonGangReady = "tasks in gang are ready to be scheduled";
inline constexpr std::string_view kPodGroupNotReady = "pod group is not ready";
inline constexpr std::string_view kPodGroupReady = "pod group is ready";

struct PodGroupCondition {
  std::string type;
  std::string status;  // "True" / "False"
  std::string transition_id;
  std::string reason;
  std::string message;
  Timestamp last_transition_time{};
  // Equality ignores transition_id and last_transition_time (as Volcano's job updater does).
  bool SameAs(const PodGroupCondition& o) const {
    return std::tie(type, status, reason, message) ==
           std::tie(o.type, o.status, o.reason, o.message);
  }
};

struct PodGroupStatus {
  PodGroupPhase phase = PodGroupPhase::kPending;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::vector<PodGroupCondition> conditions;
  // Equal when phase, counts and conditions (compared with SameAs) are equal.
  bool SameAs(const PodGroupStatus& o) const;
  // Replaces the condition of the same type, or appends it.
  void SetCondition(PodGroupCondition c);
  const PodGroupCondition* FindCondition(std::string_view type) const;
};

// Why a task is (still) pending, for its PodScheduled condition.
struct TaskSchedulingReason {
  std::string reason;  // "Schedulable" or "Unschedulable"
  std::string message;
  std::string nominated_node_name;
};

// One spec.subGroupPolicy entry of the PodGroup (see api::SubGroupPolicy): the job's pods that
// match `selector` and carry every `match_label_keys` label form one sub-group per distinct
// tuple of those labels' values (a job's partitions: key volcano.sh/partition-id). Each
// sub-group of `sub_group_size` pods is placed as a unit (all or none of it) inside one
// HyperNode its `network_topology` allows; the gang needs `min_sub_groups` complete ones.
struct SubGroupPolicy {
  std::string name;
  int32_t sub_group_size = 1;
  int32_t min_sub_groups = 0;
  std::optional<LabelSelector> selector;  // nullopt: every pod of the job
  std::vector<std::string> match_label_keys;
  std::optional<NetworkTopologyConstraint> network_topology;

  friend bool operator==(const SubGroupPolicy&, const SubGroupPolicy&) = default;
};

// The tasks of one sub-group, as JobInfo::SubGroups() collects them. Points into the job.
struct SubGroup {
  size_t policy = 0;             // index into JobInfo::sub_group_policies
  std::string name;              // "<policy>-<value>[-<value>...]", e.g. "worker-2"
  std::vector<TaskInfo*> tasks;  // in task-uid order
  int ready = 0;                 // allocated statuses and Succeeded
  int waiting = 0;               // Pipelined
  int32_t size = 1;              // the policy's subGroupSize
  // Enough of its tasks are placed (ready + waiting >= size).
  bool Complete() const { return ready + waiting >= size; }
};

class JobInfo {
 public:
  JobInfo() = default;
  JobInfo(std::string namespace_name, std::string name);
  JobInfo(JobInfo&&) = default;
  JobInfo& operator=(JobInfo&&) = default;
  JobInfo(const JobInfo&) = delete;
  JobInfo& operator=(const JobInfo&) = delete;

  // ---- PodGroup spec (set by the cache) ----
  std::string uid;  // "<namespace>/<podgroup name>"
  std::string name;
  std::string namespace_name;
  std::string queue;
  int32_t min_available = 1;
  std::map<std::string, int32_t> task_min_available;  // minTaskMember per role
  std::optional<Resource> min_resources;
  int32_t priority = 0;
  std::string priority_class_name;
  bool preemptable = false;  // the PodGroup's volcano.sh/preemptable is "true"
  // The PodGroup's volcano.sh/preemptable is "false": preempt and reclaim take none of its pods,
  // whatever the pods say.
  bool not_preemptable = false;
  Timestamp creation_time{};
  // The PodGroup was made for pods that exist before it: its controller owner is a Pod (a bare
  // pod's PodGroup) or a workload controller that creates its pods without waiting for a
  // PodGroup (apps/v1 ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job), as the podgroup
  // controller makes them. Enqueue does not admit such a PodGroup while it has no pods: its
  // pods are on their way (the pod's group annotation is written just after the PodGroup is
  // created), and admitting it empty writes an Inqueue status that the next cycle overwrites.
  // False for a vcjob's PodGroup (its pods are created only once it is Inqueue) and for
  // PodGroups made by hand.
  bool pods_precede_group = false;
  // A shadow job (scheduler/cache ShadowJobName): a bare pod's gang of one kept only in the
  // scheduler's cache until the PodGroup the podgroup controller makes for it is seen (or for
  // good, when the controller makes none). There is no object: the session writes no status
  // and records no PodGroup event for it.
  bool shadow = false;
  // spec.networkTopology (network-topology-aware plugin); nullopt: no constraint.
  std::optional<NetworkTopologyConstraint> network_topology;
  // spec.subGroupPolicy, in order; empty: the job is one gang as before.
  std::vector<SubGroupPolicy> sub_group_policies;
  // The PodGroup's volcano.sh/task-topology-* annotations that are present (key -> value), as
  // written; the task-topology plugin reads them.
  std::map<std::string, std::string> task_topology_annotations;
  // Status as read from the API; the session rewrites `podgroup_status` and writes a diff.
  PodGroupStatus podgroup_status;

  // ---- Session state ----
  // Fit errors per task uid recorded by the allocate/backfill actions.
  std::map<std::string, FitErrors> nodes_fit_errors;
  // A job-level explanation (e.g. an enqueue rejection), shown as the "Origin reason".
  std::string job_fit_errors;
  // Set by the allocate action when the job is not valid only because fewer of its pods exist
  // than it needs (minAvailable, or a task's minTaskMember): it waits for its own pods to be
  // created. Such a job is explained once on its PodGroup; its pods get no per-cycle
  // PodScheduled=False condition or FailedScheduling event (their count changes with every
  // pod created, and nothing of them is unschedulable yet).
  bool awaiting_pods = false;
  // Set at session open (see feasibility.h): pending tasks that can never be placed as the
  // cluster and queue are now (task uid -> why), and, when the gang as a whole can never run,
  // why (empty otherwise). Such tasks and jobs are explained and skipped, never waited for.
  std::map<std::string, std::string> never_fit_tasks;
  std::string never_fits;

  // ---- Tasks ----
  // Adds a task (its job_id must equal uid). Returns a stable pointer to the owned copy, or
  // nullptr if a task with that uid already exists.
  TaskInfo* AddTask(TaskInfo task);
  TaskInfo* FindTask(const std::string& task_uid);
  // Removes a task (its node accounting is the caller's job). kNotFound if absent.
  absl::Status RemoveTask(const std::string& task_uid);
  // A deep copy: PodGroup fields, session state and tasks (status index rebuilt).
  JobInfo Clone() const;
  const std::map<std::string, TaskInfo>& tasks() const { return tasks_; }
  // Moves a task to `status`, keeping the index and `allocated` in step. Node accounting is
  // the caller's job (see Session).
  void UpdateTaskStatus(TaskInfo* task, TaskStatus status);
  // Tasks with the given status, by uid.
  const std::map<std::string, TaskInfo*>& TasksWithStatus(TaskStatus status) const;
  int TaskCount(TaskStatus status) const {
    return static_cast<int>(TasksWithStatus(status).size());
  }

  // Sum of the requests of tasks in allocated statuses.
  const Resource& allocated() const { return allocated_; }
  // Sum of the requests of all tasks.
  const Resource& total_request() const { return total_request_; }

  // #{Bound, Binding, Running, Allocated, Succeeded}.
  int ReadyTaskNum() const;
  // #{Pipelined}.
  int WaitingTaskNum() const;
  // #{allocated statuses, Succeeded, Pipelined, Pending}: tasks that can still count for the gang.
  int ValidTaskNum() const;
  // Pending tasks with an empty request.
  int PendingBestEffortTaskNum() const;
  // Per role: (ready + Succeeded + pending best-effort) [+ Pipelined if `with_pipelined`] >=
  // minTaskMember.
  bool CheckTaskMinAvailable(bool with_pipelined) const;
  // True if the pod group has been admitted (phase other than Pending).
  bool IsPending() const { return podgroup_status.phase == PodGroupPhase::kPending; }

  // The sub-group `task` belongs to: the first policy whose selector matches its labels and
  // whose match_label_keys it all carries with non-empty values (Volcano's rule); nullopt when
  // none does (the task counts for the job's own gang only). `policy` receives the index.
  std::optional<std::string> SubGroupOf(const TaskInfo& task, size_t* policy) const;
  // Every sub-group with at least one task, by name.
  std::map<std::string, SubGroup> SubGroups();
  // Per policy with minSubGroups > 0: complete sub-groups >= minSubGroups. Returns the first
  // policy that falls short as "<complete>/<minSubGroups> sub-groups of <policy> complete", or ""
  // when every policy is satisfied.
  std::string SubGroupsShort() const;

  // The job-level explanation: "pod group is not ready, 2 Pending, 4 minAvailable; Pending: 2
  // Unschedulable. Origin reason is <task>: <fit errors>".
  std::string FitError() const;
  // The reason and message for a task's PodScheduled=False condition (see reference §1.5).
  TaskSchedulingReason TaskReason(const TaskInfo& task) const;

 private:
  std::map<std::string, TaskInfo> tasks_;
  std::map<TaskStatus, std::map<std::string, TaskInfo*>> status_index_;
  Resource allocated_;
  Resource total_request_;
};

}  // namespace basalt::sched
