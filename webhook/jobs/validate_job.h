#pragma once
// JobValidator (/jobs/validate): admission rules for batch.volcano.sh/v1alpha1 Jobs.
//
// CREATE: every rule of Volcano's job webhook (tasks present, task and job minAvailable vs
// replicas, unique task names, policies, pod names, topology policy CPU requests, partition
// policy, plugins known, volumes, networkTopology, dependsOn is a DAG) plus the queue: it must
// exist, be Open and be a leaf other than `root`. Errors accumulate; the message lists all.
// UPDATE: only spec.minAvailable, spec.priorityClassName, tasks[*].replicas,
// tasks[*].minAvailable and a generated volumes[*].volumeClaimName may change, within the
// replica rules; any other spec change is refused naming the changed fields.
//
// Size limits (see JobLimits): each task's replicas and their sum are at most
// --max-job-pods, so a Job cannot make the controllers build a billion pods; the pod
// template's labels and annotations must be ones the API server accepts on a pod (annotations
// at most 256 KiB with room for the job controller's own), or every pod create would fail.
//
// Every message starts with the field path ("spec.tasks[1].minAvailable: ..."), keeping
// Volcano's wording after it where users search for it.
//
// Deliberate differences from Volcano:
//   - a queue without status.state yet counts as Open (the queue controller treats it so;
//     Volcano refuses jobs for a queue created a moment earlier);
//   - stricter, since each would otherwise fail only at pod creation, visible only in events:
//     the PriorityClass named by spec.priorityClassName or a task template must exist; a
//     minimal pod template check (containers present, named, with an image; valid,
//     non-negative requests not above limits) stands in for Kubernetes' PodTemplate
//     validation; negative counts are re-checked with the messages Volcano used before v1.14;
//     exitCode policies' actions are checked too; the ray plugin needs its head task (else
//     every pod would fail with PluginError);
//   - UPDATE reports all problems, not just the first.
//   - the task-topology annotations must name the Job's tasks (webhook/jobs/task_topology.h);
//     Volcano admits any value and its scheduler then ignores the whole topology.
//
// Thread-safe if the lister is.

#include "webhook/lister.h"
#include "webhook/router.h"
#include "webhook/validation.h"

namespace basalt::webhook {

// --max-job-pods: the default most pods one Job may have. Far above real gangs (a few
// thousand pods), far below what makes the job controller's per-job work (pod names,
// indexes, status) a memory or CPU hazard.
inline constexpr int64_t kDefaultMaxJobPods = 10000;
// Bytes of a pod's annotations kept for those the job controller adds to every pod
// (task index and spec, job and group name, queue, versions: well under 2 KiB even with
// the longest names Kubernetes allows).
inline constexpr int64_t kControllerAnnotationReserveBytes = 4096;

struct JobLimits {
  // Most replicas of one task, and of all tasks together.
  int64_t max_pods = kDefaultMaxJobPods;
};

// The job plugin names admitted in spec.plugins: api::kJobPlugins, the plugins the job
// controller's registry implements; any other name is refused as unknown.
const std::vector<std::string>& KnownJobPlugins();

// The rules as functions over Job objects, for tests and tools.
ErrorList ValidateJobCreate(const json::Value& job, const ClusterLister& lister,
                            const JobLimits& limits = {});
ErrorList ValidateJobUpdate(const json::Value& old_job, const json::Value& job,
                            const ClusterLister& lister, const JobLimits& limits = {});

class JobValidator : public AdmissionHandler {
 public:
  explicit JobValidator(const ClusterLister& lister, JobLimits limits = {})
      : lister_(lister), limits_(limits) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;

 private:
  const ClusterLister& lister_;
  const JobLimits limits_;
};

}  // namespace basalt::webhook
