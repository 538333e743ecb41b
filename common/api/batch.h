#pragma once
// Typed views of Volcano's batch.volcano.sh/v1alpha1 Job and bus.volcano.sh/v1alpha1 Command
// (field names and meaning per volcano-reference/api-controllers-webhook.md §1.1 and §1.5).
//
// This is the one model of a Job: the webhook's vocabulary (vocabulary.h) names its events,
// actions and plugins, the job controller's state machine, policies, pods and plugins read
// these structs, decoded once per reconcile. As in core.h: the raw document is kept whole
// (unknown fields survive every write; pod templates stay JSON, shared immutable documents),
// the structs are decoded at parse time, and errors name the object and field path (a policy
// timeout that is not a Go duration is an error too). Decoding applies no defaults except the
// CRD's where noted (queue, maxRetry); the webhook owns defaulting. Thread-compatible; the
// shared templates are immutable and may be read from any thread.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/object.h"
#include "common/api/time.h"
#include "common/api/topology.h"
#include "common/api/vocabulary.h"

namespace basalt::api {

// One entry of spec.policies or spec.tasks[].policies: `event` / `events` / `exitCode`
// trigger `action` after `timeout`.
struct LifecyclePolicy {
  std::string action;            // as written; ParseAction gives the Action
  std::vector<JobEvent> events;  // `event` then `events[]`, names ParseEvent does not know and
                                 // "" left out
  std::optional<int32_t> exit_code;
  std::optional<std::chrono::milliseconds> timeout;  // a Go duration in the document

  friend bool operator==(const LifecyclePolicy&, const LifecyclePolicy&) = default;
};

// spec.tasks[].dependsOn.
struct DependsOn {
  std::vector<std::string> names;  // `name`
  std::string iteration;           // "any" | "all" ("" = all)

  friend bool operator==(const DependsOn&, const DependsOn&) = default;
};

// spec.tasks[].partitionPolicy: the task's replicas split into totalPartitions partitions of
// partitionSize pods, placed as units.
struct PartitionPolicy {
  int32_t total_partitions = 0;
  int32_t partition_size = 0;
  int32_t min_partitions = 0;
  std::optional<NetworkTopology> network_topology;

  friend bool operator==(const PartitionPolicy&, const PartitionPolicy&) = default;
};

// One job volume (spec.volumes[]).
struct JobVolume {
  std::string mount_path;
  // Given by the user, or generated and written back by the controller (volumeClaim set).
  std::string volume_claim_name;
  // spec.volumes[].volumeClaim (a PersistentVolumeClaimSpec), null when absent: the controller
  // creates a PVC from it. Shared and immutable, like pod templates.
  std::shared_ptr<const json::Document> volume_claim{};
};

// One entry of spec.tasks.
struct TaskSpec {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  int32_t max_retry = 0;  // 0 when unset (the webhook defaults it)
  std::string topology_policy;
  std::vector<LifecyclePolicy> policies;
  std::optional<DependsOn> depends_on;
  std::optional<PartitionPolicy> partition_policy;
  // The PodTemplateSpec ({"metadata":..., "spec":...}) copied out of the document once per
  // decode; an empty object when absent, never null. Shared by every copy of the Job (copies
  // go into plugins and pods) and never mutated: pods are built from copies of it.
  std::shared_ptr<const json::Document> pod_template;

  // template.spec.<key> as a string ("" when absent): hostname, subdomain, priorityClassName.
  std::string_view TemplateSpecString(std::string_view key) const;
};

struct JobSpec {
  std::string scheduler_name;
  int32_t min_available = 0;
  std::string queue = std::string(kDefaultQueue);  // "" in the document reads as "default"
  int32_t max_retry = 3;                           // the CRD default when absent
  std::optional<int32_t> ttl_seconds_after_finished;
  std::string priority_class_name;
  std::optional<int32_t> min_success;
  // plugin name -> arguments, as in spec.plugins (map order = name order).
  std::map<std::string, std::vector<std::string>> plugins;
  std::vector<LifecyclePolicy> policies;
  std::vector<TaskSpec> tasks;
  std::vector<JobVolume> volumes;
  std::optional<NetworkTopology> network_topology;
  std::string running_estimate;

  // Σ tasks[].replicas (saturating at INT32_MAX).
  int32_t TotalReplicas() const;
  // Σ tasks[].minAvailable, a task without minAvailable counting its replicas.
  int32_t TotalTaskMinAvailable() const;
  // The task named `name`, or null.
  const TaskSpec* FindTask(std::string_view name) const;
};

struct JobState {
  std::string phase;  // Pending, Aborting, Aborted, Running, Restarting, Completing, Completed,
                      // Terminating, Terminated, Failed
  std::string reason;
  std::string message;
  std::optional<Time> last_transition_time;

  friend bool operator==(const JobState&, const JobState&) = default;
};

// One entry of Volcano's phase history in status.conditions: no `type`, `status` is a phase.
struct JobCondition {
  std::string status;  // a job phase
  std::optional<Time> last_transition_time;

  friend bool operator==(const JobCondition&, const JobCondition&) = default;
};

// The pod counters and bookkeeping of a Job's status (status.pending ... status.unknown,
// version, retryCount, minAvailable, taskStatusCount): what the job controller's phase table
// reads and writes (controllers/job/model.h names it JobCounts). The one copy of these fields.
struct JobStatusCounts {
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t version = 0;
  int32_t retry_count = 0;
  int32_t min_available = 0;  // status.minAvailable
  // status.taskStatusCount: task name -> pod phase -> count
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;

  // taskStatusCount[task]["Succeeded"], or nullopt when the task does not appear there.
  std::optional<int32_t> TaskSucceeded(std::string_view task) const;

  friend bool operator==(const JobStatusCounts&, const JobStatusCounts&) = default;
};

struct JobStatus : JobStatusCounts {
  JobState state;
  std::string running_duration;  // Go duration string
  std::map<std::string, std::string> controlled_resources;
  // status.conditions holds two kinds of entries, written in this order: Volcano's phase history
  // (entries without `type`) and standard Kubernetes conditions (entries with `type`, `status`
  // True/False, reason, message, lastTransitionTime), one per phase the job has been in, so
  // `kubectl wait --for=condition=Completed` works (docs/controllers.md).
  std::vector<JobCondition> conditions;
  std::vector<Condition> typed_conditions;

  // The standard condition of `type`, or null.
  const Condition* FindTypedCondition(std::string_view type) const;

  friend bool operator==(const JobStatus&, const JobStatus&) = default;
};

class Job : public Object {
 public:
  // An empty Job ({}): no spec, no status.
  Job() = default;
  static absl::StatusOr<Job> Parse(std::string_view json_text);
  static absl::StatusOr<Job> FromObject(Object obj);

  const JobSpec& spec() const { return spec_; }
  const JobStatus& status() const { return status_; }
  // status.state.phase as a JobPhase ("" and unknown names read as Pending).
  JobPhase phase() const { return ParseJobPhase(status_.state.phase); }
  // The job has been initiated: status.state.phase is set and not Pending.
  bool Initiated() const { return !status_.state.phase.empty() && phase() != JobPhase::kPending; }
  // The template of task `index` inside the document (null if absent or out of range).
  const json::Value* TaskTemplate(size_t index) const;
  // The task named `name`, or null.
  const TaskSpec* FindTask(std::string_view name) const;

  // Replaces the status fields Basalt knows (zero counters are omitted like Volcano's
  // omitempty; unknown status fields are kept).
  void SetStatus(const JobStatus& status);

 private:
  explicit Job(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  JobSpec spec_;
  JobStatus status_;
};

// The counts of one task read straight from a Job document (spec.tasks[name == task]), for
// callers that must not decode the whole Job, such as per-pod informer handlers. Lenient as
// the job controller's view: absent or mistyped counts read as 0. nullopt when no task has
// that name or the document has no task list.
struct TaskReplicaCounts {
  int32_t replicas = 0;
  int32_t max_retry = 0;  // 0 when unset (the webhook defaults it to 3)

  friend bool operator==(const TaskReplicaCounts&, const TaskReplicaCounts&) = default;
};
std::optional<TaskReplicaCounts> FindTaskReplicaCounts(const json::Value& job,
                                                       std::string_view task);

// The controller ownerReference every object a Job owns carries (its PodGroup, pods, PVCs
// and plugin objects): batch.volcano.sh/v1alpha1 Job, controller and blockOwnerDeletion true.
OwnerReference JobControllerRef(const Job& job);

// Removes from copies of an old and a new Job spec the fields an update may change, so that
// what is left must be equal (Volcano's rule for Job updates): minAvailable,
// priorityClassName, each task's replicas and minAvailable (the whole task list when the
// number of tasks differs: reported on its own), and a volume's volumeClaimName where the old
// spec had a volumeClaim and no name (the controller writes the generated PVC name back).
void StripUpdatableJobSpecFields(json::Value& old_spec, json::Value& new_spec);

// Command: a one-shot request for an action on a target object (Job or Queue).
class Command : public Object {
 public:
  // A new Command in `ns`, named via generateName "<target>-<lowercased action>-" as vcctl
  // does, with an ownerReference to the target.
  static Command Make(std::string_view ns, std::string_view action, const OwnerReference& target,
                      std::string_view reason = {}, std::string_view message = {});
  static absl::StatusOr<Command> Parse(std::string_view json_text);
  static absl::StatusOr<Command> FromObject(Object obj);

  const std::string& action() const { return action_; }
  const std::optional<OwnerReference>& target() const { return target_; }
  const std::string& reason() const { return reason_; }
  const std::string& message() const { return message_; }

 private:
  explicit Command(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  std::string action_;
  std::optional<OwnerReference> target_;
  std::string reason_;
  std::string message_;
};

}  // namespace basalt::api
