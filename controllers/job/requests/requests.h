#pragma once
// The job controller's event handlers, as pure functions: which Pods belong to a Volcano Job,
// and which reconcile request (event, exit code, task, version) a Pod, PodGroup, Job or Command
// change produces (Volcano's job_controller_handler). Policy resolution (policy.h) then turns
// the request into an action.
//
// Pure functions over value types; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/json.h"
#include "controllers/job/model.h"
#include "controllers/job/policy/policy.h"
#include "controllers/job/state/state.h"

namespace basalt::controllers {

// What the handlers read from a Pod of a job.
struct JobPodInfo {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string job_name;       // annotation volcano.sh/job-name
  std::string job_uid;        // the controller ownerReference's UID
  std::string task;           // annotation volcano.sh/task-spec
  int32_t job_version = 0;    // annotation volcano.sh/job-version
  std::string phase;          // status.phase
  bool out_of_sync = false;   // annotation volcano.sh/controller-out-of-sync == "true"
  bool terminating = false;   // metadata.deletionTimestamp set
  bool ready = false;         // Running and every container ready
  int32_t restart_count = 0;  // Σ restartCount of init and regular containers
  // Exit code of the first container that terminated (containerStatuses order).
  std::optional<int32_t> exit_code;
  std::optional<int32_t> partition;  // label volcano.sh/partition-id
};

// Reads `pod` if it belongs to a Volcano Job: a controller ownerReference of kind Job in
// batch.volcano.sh/v1alpha1 and annotations job-name, task-spec and an integer job-version.
// nullopt for every other pod (the controller ignores them).
std::optional<JobPodInfo> ReadJobPod(const json::Value& pod);

// The state machine's view of the pod.
PodSnapshot ToSnapshot(const JobPodInfo& pod);

// What the update handler needs to know about the pod's task, from the job cache.
struct TaskProgress {
  int32_t replicas = 0;
  int32_t succeeded_pods = 0;     // Succeeded pods of the task, including this one
  int32_t live_pod_restarts = 0;  // Σ restart counts of the task's Running/Pending pods
  int32_t max_retry = 0;          // task.maxRetry: 0 means 3, -1 unlimited
};

// Σ over the task's Running/Pending pods of their restart counts, and its Succeeded pods.
TaskProgress ProgressOf(const api::TaskSpec& task, const std::vector<JobPodInfo>& task_pods);
// The same from the task's replicas and maxRetry alone (api::FindTaskReplicaCounts).
TaskProgress ProgressOf(int32_t replicas, int32_t max_retry,
                        const std::vector<JobPodInfo>& task_pods);

// TaskFailed: the task's live pods restarted containers at least maxRetry times.
bool TaskRetriesExhausted(const TaskProgress& progress);

// A new pod: PodPending (OutOfSync when the controller marked it); PodFailed with the exit code
// when it is already Failed (it failed while no controller watched, e.g. during a take-over).
JobRequest RequestForPodAdd(const JobPodInfo& pod);
// A changed pod (the caller skips updates with an unchanged resourceVersion):
// out-of-sync mark -> OutOfSync; became Failed -> PodFailed with the exit code; became
// Succeeded and the task has all replicas Succeeded -> TaskCompleted; Running/Pending ->
// PodRunning/PodPending when the phase changed, else TaskFailed when retries are exhausted;
// anything else OutOfSync.
JobRequest RequestForPodUpdate(const JobPodInfo& old_pod, const JobPodInfo& new_pod,
                               const TaskProgress& task);
// A deleted pod: PodEvicted, or OutOfSync when the controller deleted it itself (marked) or
// the pod was not in the cache. This is what keeps the controller's own kills from firing
// PodEvicted policies.
JobRequest RequestForPodDelete(const JobPodInfo& pod, bool in_cache);

// A PodGroup whose status.phase changed: event Unknown when it became Unknown, else a plain
// sync. nullopt when the phase did not change. `job_name` comes from the PodGroup's Job owner.
std::optional<JobRequest> RequestForPodGroupUpdate(std::string_view old_phase,
                                                   std::string_view new_phase);

// A changed Job: OutOfSync when the resourceVersion changed and the spec or the phase did.
bool JobUpdateNeedsSync(const json::Value& old_job, const json::Value& new_job);

// A Command targeting a Job: CommandIssued carrying the command's action.
JobRequest RequestForCommand(std::string_view action);

// The merge patch that marks a pod before the controller deletes it
// ({"metadata":{"annotations":{"volcano.sh/controller-out-of-sync":"true"}}}).
std::string OutOfSyncPatch();

}  // namespace basalt::controllers
