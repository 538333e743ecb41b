#pragma once
// Typed views of Volcano's batch.volcano.sh/v1alpha1 Job and bus.volcano.sh/v1alpha1 Command
// (field names and meaning per volcano-reference/api-controllers-webhook.md §1.1 and §1.5).
//
// As in core.h: the raw document is kept whole (pod templates stay raw JSON), the structs are
// decoded at parse time, and errors name the object and field path. Decoding applies no
// defaults except where noted; the webhook owns defaulting. Thread-compatible.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/object.h"
#include "common/api/time.h"
#include "common/api/vocabulary.h"

namespace basalt::api {

// LifecyclePolicy: `event` / `events` / `exitCode` trigger `action` after `timeout`.
struct LifecyclePolicy {
  std::string action;
  std::string event;
  std::vector<std::string> events;
  std::optional<int32_t> exit_code;
  std::string timeout;  // a Go duration string ("10m"), "" if absent

  friend bool operator==(const LifecyclePolicy&, const LifecyclePolicy&) = default;
};

struct DependsOn {
  std::vector<std::string> name;
  std::string iteration;  // "any" or "all"

  friend bool operator==(const DependsOn&, const DependsOn&) = default;
};

struct TaskSpec {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  std::string template_json;  // the PodTemplateSpec as compact JSON ("" if absent)
  std::vector<LifecyclePolicy> policies;
  std::optional<DependsOn> depends_on;
  std::optional<int32_t> max_retry;
  std::string topology_policy;
};

struct JobSpec {
  std::string scheduler_name;
  int32_t min_available = 0;
  std::string queue;
  std::optional<int32_t> max_retry;  // CRD default 3; see MaxRetryOrDefault()
  std::optional<int32_t> ttl_seconds_after_finished;
  std::string priority_class_name;
  std::optional<int32_t> min_success;
  std::map<std::string, std::vector<std::string>> plugins;
  std::vector<LifecyclePolicy> policies;
  std::vector<TaskSpec> tasks;
  std::string volumes_json;           // spec.volumes as compact JSON ("" if absent)
  std::string network_topology_json;  // spec.networkTopology as compact JSON
  std::string running_estimate;

  int32_t MaxRetryOrDefault() const { return max_retry.value_or(3); }
};

struct JobState {
  std::string phase;  // Pending, Aborting, Aborted, Running, Restarting, Completing, Completed,
                      // Terminating, Terminated, Failed
  std::string reason;
  std::string message;
  std::optional<Time> last_transition_time;

  friend bool operator==(const JobState&, const JobState&) = default;
};

struct JobCondition {
  std::string status;  // a job phase
  std::optional<Time> last_transition_time;

  friend bool operator==(const JobCondition&, const JobCondition&) = default;
};

struct JobStatus {
  JobState state;
  int32_t min_available = 0;
  // task name -> pod phase -> count
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t version = 0;
  int32_t retry_count = 0;
  std::string running_duration;  // Go duration string
  std::map<std::string, std::string> controlled_resources;
  std::vector<JobCondition> conditions;

  friend bool operator==(const JobStatus&, const JobStatus&) = default;
};

class Job : public Object {
 public:
  static absl::StatusOr<Job> Parse(std::string_view json_text);
  static absl::StatusOr<Job> FromObject(Object obj);

  const JobSpec& spec() const { return spec_; }
  const JobStatus& status() const { return status_; }
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
