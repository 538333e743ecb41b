#pragma once
// The Volcano vocabulary, defined once for every Basalt component: API groups and kinds, label
// and annotation keys, Job phases, bus actions and events, lifecycle-policy events and actions
// a user may write, job plugin names, PodGroup phases and conditions, and Queue states.
//
// The spellings are the observable contract with Volcano users and tools (they select on the
// labels, write the names in YAML and search for them in events; volcano-reference/
// api-controllers-webhook.md §1-§2). The webhook admits exactly what is listed here as
// supported, and the controllers dispatch on the same enums and names, so the two cannot drift
// (unit-tests/webhook/jobs/controller_agreement_test.cc checks it against the controller's
// plugin registry and phase table).
//
// Constants and pure functions only; thread-safe.

#include <optional>
#include <string_view>

namespace basalt::api {

// --- API groups, versions and kinds ----------------------------------------------------

inline constexpr std::string_view kBatchGroup = "batch.volcano.sh";
inline constexpr std::string_view kBatchApiVersion = "batch.volcano.sh/v1alpha1";
inline constexpr std::string_view kSchedulingGroup = "scheduling.volcano.sh";
inline constexpr std::string_view kSchedulingApiVersion = "scheduling.volcano.sh/v1beta1";
inline constexpr std::string_view kBusGroup = "bus.volcano.sh";
inline constexpr std::string_view kBusApiVersion = "bus.volcano.sh/v1alpha1";
// HyperNodes (common/api/topology.h).
inline constexpr std::string_view kTopologyApiVersion = "topology.volcano.sh/v1alpha1";
inline constexpr std::string_view kHyperNodeKind = "HyperNode";
// On HyperNodes a discoverer created: which source ("label") made it. The hypernode
// controller updates and deletes only HyperNodes with this label set to its source.
inline constexpr std::string_view kNetworkTopologySourceLabel =
    "volcano.sh/network-topology-source";

inline constexpr std::string_view kJobKind = "Job";
inline constexpr std::string_view kPodGroupKind = "PodGroup";
inline constexpr std::string_view kQueueKind = "Queue";
inline constexpr std::string_view kCommandKind = "Command";

// --- Label and annotation keys ---------------------------------------------------------

// On a Job's pods (labels and annotations) and PodGroup.
inline constexpr std::string_view kJobNameKey = "volcano.sh/job-name";
inline constexpr std::string_view kJobNamespaceKey = "volcano.sh/job-namespace";
inline constexpr std::string_view kTaskSpecKey = "volcano.sh/task-spec";
inline constexpr std::string_view kTaskIndexKey = "volcano.sh/task-index";
inline constexpr std::string_view kQueueNameKey = "volcano.sh/queue-name";
inline constexpr std::string_view kJobVersionKey = "volcano.sh/job-version";
inline constexpr std::string_view kJobRetryCountKey = "volcano.sh/job-retry-count";
inline constexpr std::string_view kTemplateUidKey = "volcano.sh/template-uid";
inline constexpr std::string_view kJobForwardingKey = "volcano.sh/job-forwarding";
inline constexpr std::string_view kNumaTopologyPolicyKey = "volcano.sh/numa-topology-policy";
inline constexpr std::string_view kPreemptableKey = "volcano.sh/preemptable";
inline constexpr std::string_view kCooldownTimeKey = "volcano.sh/cooldown-time";
inline constexpr std::string_view kRevocableZoneKey = "volcano.sh/revocable-zone";
inline constexpr std::string_view kPartitionIdKey = "volcano.sh/partition-id";
// Set by the job controller on a pod it is deleting, so the pod's events are not policy input.
inline constexpr std::string_view kControllerOutOfSyncKey = "volcano.sh/controller-out-of-sync";
// Pod disruption budget annotations of a Job, checked by the pod webhook.
inline constexpr std::string_view kJdbMinAvailableKey = "volcano.sh/jdb-min-available";
inline constexpr std::string_view kJdbMaxUnavailableKey = "volcano.sh/jdb-max-unavailable";
// The prefix of the keys a Job's annotations pass on to its PodGroup.
inline constexpr std::string_view kVolcanoKeyPrefix = "volcano.sh/";
// The volcano.sh/task-spec value of a task without a name.
inline constexpr std::string_view kDefaultTaskSpec = "default";

// Pod -> PodGroup binding read by the scheduler (and its Volcano-specific twin).
inline constexpr std::string_view kGroupNameAnnotation = "scheduling.k8s.io/group-name";
inline constexpr std::string_view kVolcanoGroupNameAnnotation = "scheduling.volcano.sh/group-name";
// Node groups (nodegroup plugin): a node's group is this label; a pod with the annotation goes
// only to nodes of that group (Basalt's reading of the requirements article's task annotation).
inline constexpr std::string_view kNodeGroupNameLabel = "volcano.sh/nodegroup-name";
inline constexpr std::string_view kNodeGroupAnnotation = "scheduling.volcano.sh/node-group";
// On a PodGroup the podgroup controller creates for a plain pod, and on a Namespace: the queue.
inline constexpr std::string_view kPodGroupQueueAnnotation = "scheduling.volcano.sh/queue-name";
inline constexpr std::string_view kGroupMinMemberAnnotation =
    "scheduling.volcano.sh/group-min-member";

// Queue hierarchy annotations (Volcano's pre-v1.10 hierarchical queues).
inline constexpr std::string_view kHierarchyAnnotation = "volcano.sh/hierarchy";
inline constexpr std::string_view kHierarchyWeightsAnnotation = "volcano.sh/hierarchy-weights";

// --- Job phases ------------------------------------------------------------------------

// status.state.phase of a Job.
enum class JobPhase {
  kPending,
  kAborting,
  kAborted,
  kRunning,
  kRestarting,
  kCompleting,
  kCompleted,
  kTerminating,
  kTerminated,
  kFailed,
};
inline constexpr JobPhase kAllJobPhases[] = {
    JobPhase::kPending,    JobPhase::kAborting,   JobPhase::kAborted,   JobPhase::kRunning,
    JobPhase::kRestarting, JobPhase::kCompleting, JobPhase::kCompleted, JobPhase::kTerminating,
    JobPhase::kTerminated, JobPhase::kFailed};

// "Pending", "Aborting", ...
std::string_view JobPhaseName(JobPhase phase);
// The phase named `name`; an empty or unrecognised phase is handled as Pending, as Volcano does.
JobPhase ParseJobPhase(std::string_view name);
// True for Completed, Failed, Terminated and Aborted (the job no longer runs pods of its own
// accord). Aborted is included because ResumeJob is the only way out of it.
bool IsFinishedPhase(JobPhase phase);

// --- Actions ---------------------------------------------------------------------------

// A bus.volcano.sh/v1alpha1 action. Any string is accepted on a Command (nothing validates
// it); strings Basalt does not know are kOther and handled as "anything else".
enum class Action {
  kAbortJob,
  kRestartJob,
  kRestartTask,
  kRestartPod,
  kRestartPartition,
  kTerminateJob,
  kCompleteJob,
  kResumeJob,
  kSyncJob,
  kEnqueueJob,
  kSyncQueue,
  kOpenQueue,
  kCloseQueue,
  kOther,
};
inline constexpr Action kAllActions[] = {
    Action::kAbortJob,         Action::kRestartJob,   Action::kRestartTask, Action::kRestartPod,
    Action::kRestartPartition, Action::kTerminateJob, Action::kCompleteJob, Action::kResumeJob,
    Action::kSyncJob,          Action::kEnqueueJob,   Action::kSyncQueue,   Action::kOpenQueue,
    Action::kCloseQueue,       Action::kOther};

// The actions a lifecycle policy may name, in the order the webhook lists them to users.
// SyncJob and EnqueueJob are internal; the queue actions apply to Queues, not Jobs.
inline constexpr Action kPolicyActions[] = {
    Action::kAbortJob,         Action::kRestartJob,   Action::kRestartTask, Action::kRestartPod,
    Action::kRestartPartition, Action::kTerminateJob, Action::kCompleteJob, Action::kResumeJob};

// "AbortJob", "RestartJob", ...; kOther is "Unknown".
std::string_view ActionName(Action action);
// kOther for a string that is not an action name.
Action ParseAction(std::string_view name);

// --- Events ----------------------------------------------------------------------------

// A bus.volcano.sh/v1alpha1 event, the cause of a reconcile request for a Job (named JobEvent
// to tell it from the core/v1 Event view of core.h).
enum class JobEvent {
  kNone,  // a plain sync (e.g. a PodGroup phase change other than to Unknown)
  kAny,   // "*", only meaningful in policies
  kPodFailed,
  kPodEvicted,
  kPodPending,
  kPodRunning,
  kUnknown,  // the PodGroup went Unknown
  kTaskCompleted,
  kTaskFailed,
  kOutOfSync,
  kCommandIssued,
  kJobUpdated,
};

// The events a lifecycle policy may name, in the order the webhook lists them to users.
// OutOfSync, CommandIssued and PodRunning are internal (they only ever cause a plain sync).
inline constexpr JobEvent kPolicyEvents[] = {
    JobEvent::kAny,     JobEvent::kPodFailed,     JobEvent::kPodEvicted, JobEvent::kPodPending,
    JobEvent::kUnknown, JobEvent::kTaskCompleted, JobEvent::kTaskFailed, JobEvent::kJobUpdated};

// "", "*", "PodFailed", ...
std::string_view EventName(JobEvent event);
// nullopt for a string that is not an event name; "" is kNone.
std::optional<JobEvent> ParseEvent(std::string_view name);

// --- Job plugins (spec.plugins) --------------------------------------------------------

inline constexpr std::string_view kEnvPlugin = "env";
inline constexpr std::string_view kSvcPlugin = "svc";
inline constexpr std::string_view kSshPlugin = "ssh";
inline constexpr std::string_view kMpiPlugin = "mpi";
inline constexpr std::string_view kPytorchPlugin = "pytorch";
inline constexpr std::string_view kTensorflowPlugin = "tensorflow";
inline constexpr std::string_view kRayPlugin = "ray";
inline constexpr std::string_view kHcclRankPlugin = "hcclrank";

// The job plugins Basalt implements, in name order: the controller's registry holds exactly
// these and the webhook admits exactly these.
// Every plugin of Volcano v1.15 (pkg/controllers/job/plugins, distributed-framework included).
inline constexpr std::string_view kJobPlugins[] = {kEnvPlugin,     kHcclRankPlugin,  kMpiPlugin,
                                                   kPytorchPlugin, kRayPlugin,       kSshPlugin,
                                                   kSvcPlugin,     kTensorflowPlugin};
// Plugins that need the svc plugin's headless Service (the webhook adds svc for them).
inline constexpr std::string_view kPluginsImplyingSvc[] = {kTensorflowPlugin, kMpiPlugin,
                                                           kPytorchPlugin, kRayPlugin};
// Plugins that need the ssh plugin's keys (the webhook adds ssh for them).
inline constexpr std::string_view kPluginsImplyingSsh[] = {kMpiPlugin};

// Whether `name` is in kJobPlugins.
bool IsSupportedJobPlugin(std::string_view name);

// --- PodGroup --------------------------------------------------------------------------

// status.phase of a PodGroup.
inline constexpr std::string_view kPodGroupPending = "Pending";
inline constexpr std::string_view kPodGroupRunning = "Running";
inline constexpr std::string_view kPodGroupUnknown = "Unknown";
inline constexpr std::string_view kPodGroupInqueue = "Inqueue";
inline constexpr std::string_view kPodGroupCompleted = "Completed";
// Admitted by the scheduler's enqueue: Inqueue or any later phase (pods may be created).
bool IsPodGroupAdmitted(std::string_view phase);

// status.conditions[].type of a PodGroup.
inline constexpr std::string_view kPodGroupUnschedulable = "Unschedulable";
inline constexpr std::string_view kPodGroupScheduled = "Scheduled";

// --- Scheduler evictions (preempt, reclaim) ---------------------------------------------

// Warning event reason on the victim pod and its PodGroup (`kubectl get events
// --field-selector reason=Evicted`).
inline constexpr std::string_view kEvictedEventReason = "Evicted";
// The pod condition set before the delete, as kube-scheduler and Volcano do.
inline constexpr std::string_view kDisruptionTargetCondition = "DisruptionTarget";
inline constexpr std::string_view kPreemptionBySchedulerReason = "PreemptionByScheduler";

// --- Queue -----------------------------------------------------------------------------

inline constexpr std::string_view kDefaultQueue = "default";
inline constexpr std::string_view kRootQueue = "root";

// status.state of a Queue ("" before the queue controller first wrote it counts as Open).
inline constexpr std::string_view kQueueOpen = "Open";
inline constexpr std::string_view kQueueClosed = "Closed";
inline constexpr std::string_view kQueueClosing = "Closing";
inline constexpr std::string_view kQueueUnknown = "Unknown";

}  // namespace basalt::api
