#pragma once
// Label and annotation keys, API groups and kinds the job controller writes. The values are
// the observable contract shared with Volcano (users and tools select on them).

#include <string_view>

namespace basalt::controllers::keys {

inline constexpr std::string_view kTaskSpec = "volcano.sh/task-spec";
inline constexpr std::string_view kTaskIndex = "volcano.sh/task-index";
inline constexpr std::string_view kJobName = "volcano.sh/job-name";
inline constexpr std::string_view kJobNamespace = "volcano.sh/job-namespace";
inline constexpr std::string_view kQueueName = "volcano.sh/queue-name";
inline constexpr std::string_view kJobVersion = "volcano.sh/job-version";
inline constexpr std::string_view kJobRetryCount = "volcano.sh/job-retry-count";
inline constexpr std::string_view kTemplateUid = "volcano.sh/template-uid";
inline constexpr std::string_view kJobForwarding = "volcano.sh/job-forwarding";
inline constexpr std::string_view kNumaTopologyPolicy = "volcano.sh/numa-topology-policy";
inline constexpr std::string_view kPreemptable = "volcano.sh/preemptable";
inline constexpr std::string_view kCooldownTime = "volcano.sh/cooldown-time";
inline constexpr std::string_view kRevocableZone = "volcano.sh/revocable-zone";
inline constexpr std::string_view kJdbMinAvailable = "volcano.sh/jdb-min-available";
inline constexpr std::string_view kJdbMaxUnavailable = "volcano.sh/jdb-max-unavailable";
inline constexpr std::string_view kPartitionId = "volcano.sh/partition-id";
inline constexpr std::string_view kControllerOutOfSync = "volcano.sh/controller-out-of-sync";
// Pod -> PodGroup binding read by the scheduler.
inline constexpr std::string_view kGroupName = "scheduling.k8s.io/group-name";

// The task-spec value of a task without a name.
inline constexpr std::string_view kDefaultTaskSpec = "default";

inline constexpr std::string_view kJobApiVersion = "batch.volcano.sh/v1alpha1";
inline constexpr std::string_view kJobKind = "Job";
inline constexpr std::string_view kPodGroupApiVersion = "scheduling.volcano.sh/v1beta1";
inline constexpr std::string_view kPodGroupKind = "PodGroup";

}  // namespace basalt::controllers::keys
