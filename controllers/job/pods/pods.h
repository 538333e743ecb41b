#pragma once
// Construction of a Job's pods from its task templates, and the pure part of SyncJob: which
// pods are missing and which must go.
//
// A pod is the task's PodTemplateSpec copied as raw JSON (unknown fields survive) with only
// Basalt's fields set: name `<job>-<task>-<index>`, namespace, the Volcano labels and
// annotations, a controller ownerReference to the Job, schedulerName / priorityClassName
// defaults from the Job, and the job's PVC volumes.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/util/json.h"
#include "controllers/job/model.h"
#include "controllers/job/state/state.h"

namespace basalt::controllers {

// Builds pod `index` of `task` (which must belong to `job`). Annotations record
// job.status().version and job.status().retryCount, so pass the Job with its status as of the sync
// that creates the pod. The PodGroup named in scheduling.k8s.io/group-name is the job's own
// name (ARCHITECTURE decision 3; Volcano >= v1.6 uses `<job>-<uid>`).
// `forwarded` (the job's Queue has extendClusters) adds annotation and label
// volcano.sh/job-forwarding=true.
absl::StatusOr<json::Document> BuildPod(const api::Job& job, const api::TaskSpec& task,
                                        int32_t index, bool forwarded = false);

// The controller ownerReference every object owned by `job` carries
// (batch.volcano.sh/v1alpha1 Job, controller=true, blockOwnerDeletion=true).
json::Value JobOwnerReference(const api::Job& job, json::Allocator& alloc);

// The pod volume name for the job volume bound to `claim_name`: `<job>-<12 chars [0-9a-z]>`.
// Deliberate difference: Volcano draws the 12 characters at random on every pod creation;
// Basalt derives them from the claim name, so a re-created pod is identical to the first.
std::string PodVolumeName(std::string_view job, std::string_view claim_name);

// The name of the PVC the controller creates for spec.volumes[index] when the volume has a
// volumeClaim and no volumeClaimName: `<job>-pvc-<12 chars [0-9a-z]>`, written back into the
// Job's spec. Deliberate difference: Volcano draws the 12 characters at random (and retries
// until the name is unused); Basalt derives them from the Job's UID and the volume index, so a
// controller that crashes between creating the PVC and writing its name back finds the same
// PVC again instead of leaving an orphan.
std::string GeneratedPvcName(std::string_view job, std::string_view job_uid, size_t index);

// The PersistentVolumeClaim for a job volume: `name` in the job's namespace, spec =
// volume.volume_claim (which must be set), a controller ownerReference to the Job (so deleting
// the Job deletes the claim), and label volcano.sh/job-name.
json::Document BuildPvc(const api::Job& job, const api::JobVolume& volume, std::string_view name);

// What SyncJob does to the pods of a job, for the reconcile loop to execute.
struct PodSyncPlan {
  struct ToCreate {
    std::string task;
    int32_t index = 0;
  };
  std::vector<ToCreate>
      create;  // missing pods, task by task (CreationOrder), index order; at most max_create
  std::vector<std::string> remove;  // pods of a task beyond its replicas, or of an unknown task
  bool more_missing = false;        // missing pods beyond max_create were left for a later sync
};

// Most pods one sync plans to create (the reconciler creates them in slow-start batches and
// comes back for the rest).
inline constexpr size_t kMaxPodCreatesPerSync = 1000;

// Missing pods (name not among `pods`) are created; existing ones, whatever their phase, are
// kept (Succeeded/Failed pods are not re-created by a sync, only restart actions delete them);
// pods whose index is not below the task's replicas or whose task no longer exists are removed,
// and so are pods an earlier kill marked out-of-sync but failed to delete (unless already
// terminating). Tasks for which `task_ready(task)` is false (dependsOn not met)
// get no new pods.
//
// Work and memory are O(pods + tasks + max_create) whatever the replicas: only the first
// max_create missing pods are listed (more_missing says whether there are others), and pods are
// matched to tasks by name, never by enumerating every replica, so a task with
// replicas: 1000000000 costs what its existing pods cost.
// The order in which a sync creates the tasks' pods: the tasks the Job's
// volcano.sh/task-topology-task-order annotation names, in its order, then the others in spec
// order (spec order when the annotation is absent or invalid). Pods are created in slow-start
// batches (the first alone), so a scheduler that admits a partial gang (minAvailable below the
// pod count) sees the task placed first before the others, whatever its arrival batching.
std::vector<size_t> CreationOrder(const api::Job& job);

template <typename TaskReadyFn>
PodSyncPlan PlanPodSync(const api::Job& job, const std::vector<PodSnapshot>& pods,
                        TaskReadyFn task_ready, size_t max_create = kMaxPodCreatesPerSync);
PodSyncPlan PlanPodSync(const api::Job& job, const std::vector<PodSnapshot>& pods);

// The index of pod `name` if it is `<job>-<task>-<index>` for `task` with a canonical decimal
// index (MakePodName's form), else nullopt.
std::optional<int32_t> PodIndexIn(std::string_view job, std::string_view task,
                                  std::string_view name);

// dependsOn: whether `task` may get pods. A dependency task is ready when its pods that are
// Succeeded, or Running with all containers ready, number at least its minAvailable (a task
// without minAvailable, or a name that is not a task, is ready). Iteration "any" with two or
// more names needs one ready dependency, otherwise all must be ready. No dependsOn: true.
bool TaskDependenciesMet(const api::Job& job, const api::TaskSpec& task,
                         const std::vector<PodSnapshot>& pods);

// Implementation detail of the template above.
PodSyncPlan PlanPodSyncImpl(const api::Job& job, const std::vector<PodSnapshot>& pods,
                            const std::vector<bool>& task_ready, size_t max_create);

template <typename TaskReadyFn>
PodSyncPlan PlanPodSync(const api::Job& job, const std::vector<PodSnapshot>& pods,
                        TaskReadyFn task_ready, size_t max_create) {
  std::vector<bool> ready;
  ready.reserve(job.spec().tasks.size());
  for (const auto& t : job.spec().tasks) ready.push_back(task_ready(t));
  return PlanPodSyncImpl(job, pods, ready, max_create);
}

}  // namespace basalt::controllers
