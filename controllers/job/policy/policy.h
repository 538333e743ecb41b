#pragma once
// Lifecycle policy resolution: which action a reconcile request for a Job leads to, and after
// what delay, following Volcano's order — an explicit Command action first, then internal
// events (plain sync), then stale requests (plain sync), then the task's policies, then the
// job's policies, else SyncJob. The result also carries the texts the controller writes into
// the Job's Events.
//
// Pure functions over value types; thread-safe.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "controllers/job/model.h"

namespace basalt::controllers {

// One reconcile request for a Job (a Job/Pod/PodGroup change, or a Command).
struct JobRequest {
  std::string job_uid;  // the Job UID the triggering pod/PodGroup belongs to ("" = unknown)
  std::string task;     // the triggering pod's task ("" for job-level requests)
  std::string pod;      // the triggering pod's name
  Event event = Event::kNone;
  // Container exit code of a failed pod; absent for everything else, so a policy's exitCode
  // can never match a request that carries none.
  std::optional<int32_t> exit_code;
  // A Command's action string, which overrides every policy.
  std::optional<std::string> action;
  // volcano.sh/job-version of the triggering pod. Absent for requests that do not come from a
  // pod (Job and PodGroup changes, Commands). Deliberate difference: Volcano sends version 0
  // for PodGroup requests, so after the first whole-job kill `Unknown` policies never fire
  // again; Basalt only treats requests from pods of an older run as stale.
  std::optional<int32_t> job_version;
};

// Why the resolver chose its action.
enum class PolicySource {
  kCommand,       // an explicit action (Command)
  kInternal,      // OutOfSync / CommandIssued / PodRunning: plain sync
  kStaleJob,      // request for another Job UID of the same name
  kStaleVersion,  // request from a pod of an earlier run
  kTaskPolicy,    // a policy of the request's task matched
  kJobPolicy,     // a job-level policy matched
  kDefault,       // nothing matched: SyncJob
};
std::string_view PolicySourceName(PolicySource source);

struct ResolvedAction {
  Action action = Action::kSyncJob;
  // The action string as written by the user (for kOther it is what they wrote).
  std::string action_name = "SyncJob";
  // The matched policy's timeout: the action runs after this delay (zero = now).
  std::chrono::milliseconds delay{0};
  PolicySource source = PolicySource::kDefault;
  // A sentence naming the trigger and the policy, for logs and event messages, e.g.
  // "PodFailed of pod ns/job-worker-1 (task worker) matched task policy PodFailed -> RestartJob".
  std::string cause;

  // Event reason and message of the Kubernetes Event the controller records for this action
  // ("ExecuteAction", "Start to execute action RestartJob" or "Execute action RestartJob after
  // 5m0s"); empty for SyncJob, which is not announced.
  std::string_view event_reason() const;
  std::string event_message() const;
};

// Resolves the action for `request` against `job` (its UID, status.version and policies).
ResolvedAction ResolvePolicy(const api::Job& job, const JobRequest& request);

// Whether `policy` matches the request's event or exit code (Volcano's rule: the event list
// contains the event or "*", a PodPending match counting only with a timeout; else the exit
// code equals the request's).
bool PolicyMatches(const LifecyclePolicy& policy, const JobRequest& request);

}  // namespace basalt::controllers
