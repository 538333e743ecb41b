#pragma once
// Conversions between the API objects the scheduler watches (compact pods and nodes, the typed
// PodGroup and Queue views) and the scheduling snapshot types (TaskInfo, NodeInfo, JobInfo,
// QueueInfo), and back to the JSON the status writer sends. Pure functions; thread-safe.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/compact.h"
#include "common/api/scheduling.h"
#include "common/api/topology.h"
#include "common/informer/object.h"
#include "common/resource/resource_list.h"
#include "scheduler/api/hypernode.h"
#include "scheduler/api/job_info.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/queue_info.h"
#include "scheduler/api/task_info.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

// What the scheduler keeps of a pod: the compact view plus the PodScheduled=False condition it
// carries (so the session writes the condition only when it changes).
struct CachedPod {
  api::CompactPod pod;
  SharedOptional<PodScheduledCondition> scheduled_condition;  // shared with its tasks
  // vGPU request (null: none; pod.request then lacks the per-GPU vGPU dimensions) and the
  // assignment read from the pod's annotations (scheduler/cache/vgpu.h).
  std::shared_ptr<const VgpuRequest> vgpu;
  VgpuAssignment vgpu_assignment;
  // Read for the shadow job of a bare pod (ShadowJobName): the pod's
  // scheduling.volcano.sh/queue-name annotation ("" if none), whether it carries
  // scheduling.volcano.sh/group-min-member (it declares a gang: no shadow job), and its
  // volcano.sh/preemptable annotation (nullopt if none), which the podgroup controller copies
  // onto the PodGroup it makes.
  std::string queue_annotation;
  bool has_min_member = false;
  std::optional<std::string> preemptable_annotation;

  // The pod's placement inputs in the forms a TaskInfo holds them, made once by
  // PrepareTaskInputs (CachedPodTransform calls it): every task made from this pod, the cache's
  // and each snapshot's copy, shares these values instead of re-making them, and equal label
  // sets, node selectors and tolerations (pods of one template) are one value process-wide
  // (issue 17: memory per pod). Once prepared, `pod`'s request, labels, node_selector,
  // tolerations, host_ports and affinity_json are empty: nothing else reads them.
  bool task_inputs_prepared = false;
  Resource request;  // the effective request (pod.request before)
  Shared<LabelSet> labels;
  Shared<std::map<std::string, std::string>> node_selector;
  Shared<NodeAffinity> affinity;
  std::shared_ptr<const PodAffinity> pod_affinity;  // null: no pod (anti-)affinity terms
  Shared<std::vector<Toleration>> tolerations;
  Shared<std::vector<HostPort>> host_ports;
};

// Converts `cached.pod`'s placement inputs into the task forms above and empties them in
// `pod`; no-op when already prepared. A CachedPod built by hand (tests) needs no call: the
// conversions below prepare a copy of an unprepared pod.
void PrepareTaskInputs(CachedPod& cached);

// What the scheduler keeps of a PodGroup (issue 17): its identity, controller owner, decoded
// spec and status, and the annotations and label it reads, without the parsed document (whose
// RapidJSON pool reserves 64 KiB per object). Nothing is written back from it: status writes
// are merge patches built from the session's status (PodGroupStatusPatch), so fields the
// scheduler does not know stay as they are in the API server.
struct CachedPodGroup {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::optional<api::Time> creation_timestamp;
  std::optional<api::OwnerReference> controller;
  api::PodGroupSpec spec;
  api::PodGroupStatus status;
  // volcano.sh/preemptable: the annotation, else the label; nullopt when neither is set.
  std::optional<std::string> preemptable;
  // The volcano.sh/task-topology-* annotations that are present (key -> value).
  std::map<std::string, std::string> task_topology_annotations;
};
CachedPodGroup ToCachedPodGroup(const api::PodGroup& pg);

// The name of the PodGroup the podgroup controller makes for a bare pod (`podgroup-<pod uid>`,
// as PlanBarePodGroup) when the pod may be scheduled without waiting for it, through a shadow
// job kept only in the scheduler's cache: the pod has no controller owner, no
// scheduling.volcano.sh/group-min-member annotation, no group annotation other than that very
// name, and has not terminated. "" otherwise. (The scheduler-name check is the caller's.)
// Owned pods never get one: their gang size may come from the owner's annotations, which the
// scheduler does not watch.
std::string ShadowJobName(const CachedPod& cached);
// The shadow job (no tasks) of a bare pod: job id "<ns>/<ShadowJobName>", minMember 1, queue
// from the pod's annotation or `default_queue`, the pod's priority class, minResources the
// pod's request, phase Pending, `shadow` set. Requires ShadowJobName(cached) != "".
JobInfo ToShadowJobInfo(const CachedPod& cached, std::string_view default_queue);

// Informer transform: pod document -> CachedPod (name "scheduler-pod").
informer::Transform CachedPodTransform();
// Informer transforms keeping the typed views (whole documents are small for these kinds).
informer::Transform PodGroupTransform();       // payload CachedPodGroup
informer::Transform QueueTransform();          // payload api::Queue
informer::Transform PriorityClassTransform();  // payload api::PriorityClass
informer::Transform HyperNodeTransform();      // payload api::HyperNode

// True for names a node can provide: cpu, memory, ephemeral-storage, hugepages-*, and
// domain-qualified extended resources (nvidia.com/gpu). False for "pods" (NodeInfo keeps
// max_pods apart) and quota-style keys (requests.*, limits.*, count/*).
bool IsSchedulableResourceName(std::string_view name);

// Exact conversion of the schedulable names (IsSchedulableResourceName); the rest is dropped.
Resource ToResource(const resource::ResourceList& list);
// Back to a ResourceList: cpu and memory always present, scalars in whole or milli units.
resource::ResourceList ToResourceList(const Resource& r);

// Parses spec.affinity.nodeAffinity (compact JSON); other affinity kinds are ignored.
absl::StatusOr<NodeAffinity> ParseNodeAffinity(std::string_view affinity_json);

// Parses spec.affinity.podAffinity and podAntiAffinity (compact JSON) of a pod in
// `pod_namespace` (the default namespace of its terms). Returns null when there are no terms.
// kInvalidArgument for an unknown label selector operator.
absl::StatusOr<std::shared_ptr<const PodAffinity>> ParsePodAffinity(std::string_view affinity_json,
                                                                    std::string_view pod_namespace);

// The task for a pod. `job_id` is "<ns>/<podgroup>" or "". Terminated pods keep no node (as in
// Volcano, a Succeeded or Failed pod does not use node resources).
TaskInfo ToTaskInfo(const CachedPod& cached, std::string job_id);
NodeInfo ToNodeInfo(const api::CompactNode& node);
// The job (no tasks) for a PodGroup; an empty spec.queue means `default_queue`.
JobInfo ToJobInfo(const CachedPodGroup& pg, std::string_view default_queue);
JobInfo ToJobInfo(const api::PodGroup& pg, std::string_view default_queue);
QueueInfo ToQueueInfo(const api::Queue& queue);
HyperNodeInfo ToHyperNodeInfo(const api::HyperNode& hn);

// The PodGroup status as the session sees it, and back as the JSON of `status`.
PodGroupStatus ToPodGroupStatus(const api::PodGroupStatus& status);
std::string PodGroupStatusPatch(const PodGroupStatus& status);
// Strategic merge patch for pods/status setting PodScheduled=False.
std::string PodConditionPatch(const PodScheduledCondition& condition, Timestamp now);
// Strategic merge patch for pods/status setting DisruptionTarget=True, reason
// PreemptionByScheduler, message "<scheduler>: preempting to accommodate a higher priority pod".
std::string DisruptionTargetPatch(std::string_view scheduler_name, Timestamp now);
// Merge patch for queues/status setting status.allocated; dimensions present in `previous` but
// absent now are written as "0" so a merge patch cannot leave them behind.
std::string QueueAllocatedPatch(const Resource& allocated, const Resource& previous);
// The same, and status.deserved / status.guarantee when `update` sets them (a Basalt extension),
// each with the dimensions of its `previous_*` absent now written as "0".
std::string QueueStatusPatch(const QueueStatusUpdate& update, const Resource& previous_allocated,
                             const Resource& previous_deserved, const Resource& previous_guarantee);

}  // namespace basalt::sched::cache
