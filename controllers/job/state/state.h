#pragma once
// The Job phase state machine (Volcano's JC/state), as data: for a job in phase P receiving
// action A, a Plan says what the reconcile loop does to the pods (sync, kill the whole job,
// kill a target), the bookkeeping it applies (version, retryCount, PodGroup deletion, plugin
// OnJobDelete), and the rule that turns the pod counts observed *after* that effect into the
// next phase. The loop runs:
//
//   Plan plan = PlanAction(phase, action, job.spec, job.status);
//   ... execute plan.effect (SyncJob, or delete the pods ShouldKill() selects) ...
//   JobCounts after = AccountKill(...) or the sync counts, with ApplyBookkeeping(plan, ...);
//   JobPhase next = NextPhase(plan, phase, after, job.spec);
//
// Transition() does both steps at once for callers that already hold the resulting counts.
//
// Pure functions over value types; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controllers/job/model.h"

namespace basalt::controllers {

// What the reconcile loop does to the job's pods.
enum class PodEffect {
  kSync,        // SyncJob: create missing pods, remove scaled-down ones, recount
  kKillJob,     // delete every pod of the job, except retained phases
  kKillTarget,  // delete the pods of the request's task, pod or partition only
};
std::string_view PodEffectName(PodEffect effect);

// How the next phase follows from the counts after the effect ran.
enum class PhaseRule {
  kKeep,              // the phase does not change
  kSet,               // to Plan::target
  kPendingToRunning,  // Running once spec.minAvailable <= running + succeeded + failed
  kCompletionRules,   // Running's completion rules: Completed / Failed / Pending / unchanged
  kRestartCheck,      // Failed if retries are used up, Pending once enough pods are gone
  kWhenDrained,       // to Plan::target once terminating = pending = running = 0
};

struct Plan {
  PodEffect effect = PodEffect::kSync;
  // kKillJob only: Succeeded and Failed pods are kept (Volcano's retainSoft). Also set for
  // kills with "retain none" on the last retry, so the final failed pods stay inspectable.
  bool retain_finished_pods = false;
  // Every whole-job kill bumps status.version (pods of the previous run then carry an older
  // version and their events are downgraded to SyncJob) and deletes the PodGroup.
  bool bump_version = false;
  bool delete_pod_group = false;
  // Every kill, whole-job or targeted, runs each plugin's OnJobDelete.
  bool run_plugins_on_job_delete = false;
  // Added to status.retryCount (restart and resume actions).
  int32_t retry_increment = 0;
  PhaseRule rule = PhaseRule::kKeep;
  JobPhase target = JobPhase::kPending;  // for kSet and kWhenDrained

  bool operator==(const Plan&) const = default;
};

// Step 1: what `action` does to a job in `phase`. `status` is the job's status before the
// action (only retryCount is read, for the last-retry retention rule).
Plan PlanAction(JobPhase phase, Action action, const api::JobSpec& spec, const JobCounts& status);

// Whether the phase table has a row of its own for `action` in some phase, i.e. the action
// does something other than the catch-all of every phase. Every action a lifecycle policy may
// name (api::kPolicyActions) must satisfy this; the webhook/controller agreement test checks it.
bool HandlesAction(Action action);

// Step 2: the phase after `plan` ran from `current`, given the counts it produced. `after`
// must already include the plan's retry increment (see ApplyBookkeeping).
JobPhase NextPhase(const Plan& plan, JobPhase current, const JobCounts& after,
                   const api::JobSpec& spec);

// Running's completion rules (Volcano's Running-state default branch): minSuccess reached ->
// Completed; all pods finished -> Completed or Failed by task minAvailable, minSuccess and
// spec.minAvailable; too many pending -> Pending; otherwise nullopt (unchanged).
std::optional<JobPhase> CompletionPhase(const JobCounts& counts, const api::JobSpec& spec);

// Restarting's check: Failed when retryCount >= spec.maxRetry; Pending once
// Σ replicas − terminating >= status.minAvailable; else Restarting.
JobPhase RestartCheckPhase(const JobCounts& counts, const api::JobSpec& spec);

struct Decision {
  Plan plan;
  JobPhase next_phase = JobPhase::kPending;
};

// Both steps: `counts` are the counts after the effect (retry increment not yet applied; it is
// applied here before the phase rule is evaluated).
Decision Transition(JobPhase phase, Action action, const JobCounts& counts,
                    const api::JobSpec& spec);

// Applies the plan's version bump and retry increment to `counts` (status.version and
// status.retryCount) and returns it.
JobCounts ApplyBookkeeping(const Plan& plan, JobCounts counts);

// ---- Kill selection and accounting -------------------------------------------------------

// What the loop knows about one existing pod of the job.
struct PodSnapshot {
  std::string name;
  std::string task;          // volcano.sh/task-spec
  std::string phase;         // status.phase: Pending, Running, Succeeded, Failed, Unknown
  bool terminating = false;  // metadata.deletionTimestamp is set
  std::optional<int32_t> partition;
  bool ready = false;        // Running with every container ready (for dependsOn)
  bool out_of_sync = false;  // marked volcano.sh/controller-out-of-sync by an earlier kill
};

// The scope of a targeted kill, from the request (RestartTask / RestartPod / RestartPartition).
struct KillTarget {
  std::string task;
  std::string pod;
  std::optional<int32_t> partition;  // with task
};

// Whether executing `plan` (for `action`) deletes `pod`. Pods already terminating are never
// deleted again; kSync deletes nothing here (sync decides scale-down itself).
bool ShouldKill(const Plan& plan, Action action, const PodSnapshot& pod, const KillTarget& target);

// Counts pods by phase: terminating pods count as terminating only; others by status.phase,
// into the job counters and taskStatusCount. Bookkeeping fields are copied from `base`.
JobCounts CountPods(const std::vector<PodSnapshot>& pods, const JobCounts& base);

// Counts after a kill: pods already terminating and pods whose deletion succeeded (`deleted`,
// by name) count as terminating; every other pod — retained, outside the target, or whose
// deletion failed — counts by its phase. Deliberate difference from Volcano >= v1.11, which
// drops retained Succeeded/Failed pods from the counters (they could fall to 0 after a kill
// and turn a Completed job's counts into nonsense): Basalt keeps them (ARCHITECTURE decision 10).
JobCounts AccountKill(const std::vector<PodSnapshot>& pods, const std::vector<std::string>& deleted,
                      const JobCounts& base);

}  // namespace basalt::controllers
