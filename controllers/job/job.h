#pragma once
// The job controller's own small view of a batch.volcano.sh/v1alpha1 Job: the fields the state
// machine, the policy resolver, pod/PodGroup construction and the job plugins read. Phases,
// actions and events come from common/api/vocabulary.h.
//
// Pod templates stay raw JSON (ARCHITECTURE decision 1): a TaskSpecView holds the template as
// an immutable document shared by every copy of the view (shared because views are copied into
// work items and plugins while the template is never mutated).
//
// These are plain value types; thread-compatible.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "common/util/json.h"

namespace basalt::controllers {

// The Job phases, actions and events are the shared vocabulary of common/api; the controller
// names them unqualified.
using api::Action;
using api::ActionName;
using Event = api::JobEvent;
using api::EventName;
using api::IsFinishedPhase;
using api::JobPhase;
using api::JobPhaseName;
using api::kAllActions;
using api::kAllJobPhases;
using api::ParseAction;
using api::ParseEvent;
using api::ParseJobPhase;

// One entry of spec.policies or spec.tasks[].policies.
struct LifecyclePolicy {
  std::string action;         // raw action string, see ParseAction
  std::vector<Event> events;  // `event` and `events[]` merged, in that order
  std::optional<int32_t> exit_code;
  std::optional<std::chrono::milliseconds> timeout;
};

// One job volume (spec.volumes[]).
struct JobVolumeView {
  std::string mount_path;
  // Given by the user, or generated and written back by the controller (volumeClaim set).
  std::string volume_claim_name;
  // spec.volumes[].volumeClaim (a PersistentVolumeClaimSpec), null when absent: the controller
  // creates a PVC from it. Shared and immutable, like pod templates.
  std::shared_ptr<const json::Document> volume_claim{};
};

// spec.networkTopology.
struct NetworkTopologyView {
  std::string mode;  // "hard" | "soft"
  std::optional<int32_t> highest_tier_allowed;
  std::string highest_tier_name;
};

// spec.tasks[].partitionPolicy: the task's replicas split into totalPartitions partitions of
// partitionSize pods, placed as units.
struct PartitionPolicyView {
  int32_t total_partitions = 0;
  int32_t partition_size = 0;
  int32_t min_partitions = 0;
  std::optional<NetworkTopologyView> network_topology;
};

// spec.tasks[].dependsOn.
struct DependsOnView {
  std::vector<std::string> names;
  std::string iteration;  // "any" | "all" ("" = all)
};

// One entry of spec.tasks.
struct TaskSpecView {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;
  int32_t max_retry = 0;
  std::string topology_policy;
  std::vector<LifecyclePolicy> policies;
  std::optional<DependsOnView> depends_on;
  std::optional<PartitionPolicyView> partition_policy;
  // The PodTemplateSpec ({"metadata":..., "spec":...}); an empty object when absent. Never null.
  std::shared_ptr<const json::Document> pod_template;

  // template.spec.<key> as a string ("" when absent): hostname, subdomain, priorityClassName.
  std::string_view TemplateSpecString(std::string_view key) const;
};

// The Job's spec, as the controller uses it.
struct JobSpecView {
  std::string scheduler_name;
  std::string queue = "default";
  std::string priority_class_name;
  int32_t min_available = 0;
  int32_t max_retry = 3;
  std::optional<int32_t> min_success;
  std::optional<NetworkTopologyView> network_topology;
  std::vector<JobVolumeView> volumes;
  std::vector<TaskSpecView> tasks;
  std::vector<LifecyclePolicy> policies;
  // plugin name -> arguments, as in spec.plugins (map order = name order).
  std::map<std::string, std::vector<std::string>> plugins;

  // Σ tasks[].replicas.
  int32_t TotalReplicas() const;
  // Σ tasks[].minAvailable, a task without minAvailable counting its replicas.
  int32_t TotalTaskMinAvailable() const;
  // The task named `name`, or nullptr.
  const TaskSpecView* FindTask(std::string_view name) const;
};

// Pod counters and bookkeeping of status, the inputs of the phase table.
struct JobCounts {
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t version = 0;
  int32_t retry_count = 0;
  int32_t min_available = 0;  // status.minAvailable
  // status.taskStatusCount: task -> pod phase name -> count.
  std::map<std::string, std::map<std::string, int32_t>> task_status_count;

  // taskStatusCount[task]["Succeeded"], or nullopt when the task does not appear there.
  std::optional<int32_t> TaskSucceeded(std::string_view task) const;
  bool operator==(const JobCounts&) const = default;
};

// The Job as a whole: identity, the metadata Basalt copies, spec and status.
struct JobView {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  JobSpecView spec;
  std::string phase_name;  // raw status.state.phase ("" before initiation)
  JobCounts status;
  // status.controlledResources: "plugin-<name>" -> name, "volume-pvc-<pvc>" -> pvc.
  std::map<std::string, std::string> controlled_resources;

  JobPhase phase() const { return ParseJobPhase(phase_name); }
  // The job has been initiated: status.state.phase is set and not Pending.
  bool Initiated() const { return !phase_name.empty() && phase() != JobPhase::kPending; }
};

// Builds a JobView from a Job object as served by the API server. Fields are read leniently
// (absent or mistyped -> default), as the CRD schema and the webhook have validated them;
// the error cases are a non-object input and a task template that is not an object.
absl::StatusOr<JobView> ParseJob(const json::Value& job);

// `<job>-<task>-<index>`, the name of a task's pod.
std::string MakePodName(std::string_view job, std::string_view task, int32_t index);

}  // namespace basalt::controllers
