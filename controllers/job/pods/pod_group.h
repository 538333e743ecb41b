#pragma once
// Construction of a Job's PodGroup (scheduling.volcano.sh/v1beta1): one per job, named after
// the job (ARCHITECTURE decision 3), with a controller ownerReference to the Job, the label
// volcano.sh/job-name, the gang sizes and the minimum resources of the gang.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "common/resource/resource_list.h"
#include "common/util/json.h"
#include "controllers/job/model.h"

namespace basalt::controllers {

// PriorityClass name -> value, from the PriorityClass informer. Unknown names count as 0.
using PriorityClassValues = std::map<std::string, int32_t>;

// The ResourceQuota pod usage of a pod spec, as Kubernetes' pod evaluator computes it: `pods`
// and `count/pods` = 1; the pod's effective request (containers, init containers and sidecars,
// overhead) written as `cpu`/`requests.cpu`, `memory`/`requests.memory`, `ephemeral-storage`/
// `requests.ephemeral-storage`, `hugepages-*`/`requests.hugepages-*`, extended resources as
// `requests.<name>` and (as Volcano adds) `<name>`; limits as `limits.cpu`, `limits.memory`,
// `limits.ephemeral-storage`. Errors name an unparsable quantity.
// Deliberate difference: a container resource with a limit and no request counts its limit, as
// the API server defaults it on the real pod (Volcano reads the undefaulted template, so a GPU
// given only as a limit is missing from its minResources and the gang is admitted too early).
absl::StatusOr<resource::ResourceList> PodQuotaUsage(const json::Value& pod_spec);

// The PodGroup's minResources: tasks are ordered by their template's PriorityClass value
// (highest first, spec order on ties). If spec.minAvailable < Σ task.minAvailable, the usage of
// the first minAvailable pods in that order; otherwise each task's minAvailable pods (capped at
// minAvailable in total), topped up with further replicas in priority order until minAvailable
// pods are covered.
absl::StatusOr<resource::ResourceList> MinResources(const api::JobSpec& spec,
                                                    const PriorityClassValues& priorities);

// minTaskMember: task -> task.minAvailable, else minPartitions x partitionSize when both are
// non-zero, else replicas.
std::map<std::string, int32_t> MinTaskMember(const api::JobSpec& spec);

// The PodGroup object to create for `job` (status.phase Pending). Each partitioned task adds a
// spec.subGroupPolicy entry: name = task, subGroupSize = partitionSize, minSubGroups =
// minPartitions, labelSelector task-spec=<task>, matchLabelKeys [volcano.sh/partition-id], and
// the partition's networkTopology.
absl::StatusOr<json::Document> BuildPodGroup(const api::Job& job,
                                             const PriorityClassValues& priorities);

// Whether an existing PodGroup's spec differs from the desired one in a field the controller
// keeps in sync (minMember, minTaskMember, minResources — compared as quantities —,
// priorityClassName, subGroupPolicy), i.e. whether it must be updated.
bool PodGroupSpecDiffers(const json::Value& existing, const json::Value& desired);

// Whether `pod_group` carries a controller ownerReference to the Job with UID `job_uid`. A
// PodGroup with the job's name that is not owned by it belongs to an earlier Job of the same
// name: the controller deletes it (UID precondition) and creates a fresh one.
bool PodGroupOwnedBy(const json::Value& pod_group, std::string_view job_uid);

}  // namespace basalt::controllers
