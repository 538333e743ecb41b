#pragma once
// What vcctl prints: the tables of `job list`, `queue list|get`, `pod list`, `podgroup list`
// and the description of `job view`, with Volcano's column names, order and widths (pkg/cli),
// and the human-readable ages of kubectl (k8s.io/apimachinery duration.HumanDuration).
//
// Pure functions over the typed views of common/api; `now` is passed in so output is
// reproducible. Thread-safe.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/api/batch.h"
#include "common/api/core.h"
#include "common/api/scheduling.h"
#include "common/api/time.h"
#include "common/util/json.h"

namespace basalt::cli {

// The label holding a Job's type for `job list` (Volcano's JobTypeKey); "Batch" when absent.
inline constexpr std::string_view kJobTypeLabel = "volcano.sh/job-type";
// Printed instead of an empty table.
inline constexpr std::string_view kNoResources = "No resources found\n";

// "45s", "3m20s", "2h5m", "4d", as kubectl prints ages.
std::string HumanDuration(std::chrono::nanoseconds d);
// The age of `t` at `now` ("<unknown>" when absent).
std::string Age(const std::optional<api::Time>& t, api::Time now);

// `vcctl job list`: Name Creation Phase JobType Replicas Min Pending Running Succeeded Failed
// Unknown RetryCount, with a leading Namespace column for --all-namespaces. The name column is
// as wide as the longest name plus 3.
std::string FormatJobList(const std::vector<api::Job>& jobs, bool all_namespaces);

// `vcctl job view`: the Job's metadata, spec (tasks with replicas, images and requests),
// status counters, state (phase, reason, message), conditions, and its events.
std::string FormatJobView(const api::Job& job, const std::vector<api::Event>& events,
                          api::Time now);

// PodGroup counts per phase of one queue (Volcano's queue list counts PodGroups, not the
// queue's status counters, so the numbers are current).
struct QueuePodGroupCounts {
  int inqueue = 0;
  int pending = 0;
  int running = 0;
  int unknown = 0;
  int completed = 0;
};
// Counts `podgroups` by spec.queue and status.phase.
std::map<std::string, QueuePodGroupCounts, std::less<>> CountPodGroupsByQueue(
    const std::vector<api::PodGroup>& podgroups);

// `vcctl queue list`: Name Weight State Inqueue Pending Running Unknown Completed.
std::string FormatQueueList(const std::vector<api::Queue>& queues,
                            const std::map<std::string, QueuePodGroupCounts, std::less<>>& counts);
// `vcctl queue get`: Name Weight State Inqueue Pending Running Unknown (the queue's status).
std::string FormatQueue(const api::Queue& queue);

// The STATUS column of a pod as kubectl computes it (phase, pod reason, container waiting or
// terminated reasons, ExitCode:N, Terminating).
std::string PodStatusText(const api::Pod& pod);
// `vcctl pod list`: Name Ready Status Restart Age (each column its longest value plus 8), with
// a leading Namespace column for --all-namespaces.
std::string FormatPodList(const std::vector<api::Pod>& pods, bool all_namespaces, api::Time now);

// `vcctl podgroup list`: Name Phase MinMember Running Succeeded Failed Queue Age, with a
// leading Namespace column for --all-namespaces.
std::string FormatPodGroupList(const std::vector<api::PodGroup>& podgroups, bool all_namespaces,
                               api::Time now);

// `vcctl jobflow list`: Name Namespace Phase Age (status.state.phase), each column its longest
// value or title plus 4. Takes the raw objects: common/api has no JobFlow view yet.
std::string FormatJobFlowList(const std::vector<api::Object>& jobflows, api::Time now);
// `vcctl jobtemplate list`: Name Namespace, each column its longest value or title plus 4.
std::string FormatJobTemplateList(const std::vector<api::Object>& jobtemplates);

// `-o json`: the object as indented JSON (2 spaces), ending in a newline.
std::string FormatJson(const json::Value& object);
// `-o yaml`: the object as block YAML, keys in the object's order, kubectl's layout (sequence
// items at their key's indentation). Strings that YAML would read as another type (true, 1,
// null, "", leading/trailing space, ": ", "#", newlines...) are double-quoted.
std::string FormatYaml(const json::Value& object);

}  // namespace basalt::cli
