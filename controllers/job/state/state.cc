#include "controllers/job/state/state.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "common/util/log.h"

namespace basalt::controllers {
namespace {

// A set of actions, as a bit mask over Action.
using ActionSet = uint32_t;
constexpr ActionSet Bit(Action a) { return ActionSet{1} << static_cast<unsigned>(a); }
constexpr ActionSet kAny = ~ActionSet{0};
constexpr ActionSet kRestartJob = Bit(Action::kRestartJob);
constexpr ActionSet kRestartTarget =
    Bit(Action::kRestartTask) | Bit(Action::kRestartPod) | Bit(Action::kRestartPartition);
constexpr ActionSet kAbort = Bit(Action::kAbortJob);
constexpr ActionSet kComplete = Bit(Action::kCompleteJob);
constexpr ActionSet kTerminate = Bit(Action::kTerminateJob);
constexpr ActionSet kResume = Bit(Action::kResumeJob);
constexpr ActionSet kSyncOnly = Bit(Action::kSyncJob);
static_assert(static_cast<unsigned>(Action::kOther) < 32, "ActionSet holds every action");

constexpr PodEffect kSync = PodEffect::kSync;
constexpr PodEffect kKillJob = PodEffect::kKillJob;
constexpr PodEffect kKillTarget = PodEffect::kKillTarget;
constexpr bool kSoft = true;   // retain Succeeded/Failed pods (Volcano's retainSoft)
constexpr bool kNone = false;  // retain nothing

// One row of the reference's phase table (§2.4): in `phase`, an action in `actions` has
// `effect` (retaining finished pods or not), adds `retry` to retryCount and moves the job by
// `rule` (to `target`). The first matching row wins; every phase ends with a catch-all row.
struct Row {
  JobPhase phase;
  ActionSet actions;
  PodEffect effect;
  bool retain_finished;
  int32_t retry;
  PhaseRule rule;
  JobPhase target;
};

using P = JobPhase;
using R = PhaseRule;

// clang-format off
constexpr Row kPhaseTable[] = {
  // Pending and Running share the user actions; they differ in what a sync does.
  {P::kPending,     kRestartJob,    kKillJob,    kNone, 1, R::kSet,              P::kRestarting},
  {P::kPending,     kRestartTarget, kKillTarget, kNone, 1, R::kSet,              P::kRestarting},
  {P::kPending,     kAbort,         kKillJob,    kSoft, 0, R::kSet,              P::kAborting},
  {P::kPending,     kComplete,      kKillJob,    kSoft, 0, R::kSet,              P::kCompleting},
  {P::kPending,     kTerminate,     kKillJob,    kSoft, 0, R::kSet,              P::kTerminating},
  {P::kPending,     kAny,           kSync,       kNone, 0, R::kPendingToRunning, P::kPending},

  {P::kRunning,     kRestartJob,    kKillJob,    kNone, 1, R::kSet,              P::kRestarting},
  {P::kRunning,     kRestartTarget, kKillTarget, kNone, 1, R::kSet,              P::kRestarting},
  {P::kRunning,     kAbort,         kKillJob,    kSoft, 0, R::kSet,              P::kAborting},
  {P::kRunning,     kComplete,      kKillJob,    kSoft, 0, R::kSet,              P::kCompleting},
  {P::kRunning,     kTerminate,     kKillJob,    kSoft, 0, R::kSet,              P::kTerminating},
  {P::kRunning,     kAny,           kSync,       kNone, 0, R::kCompletionRules,  P::kRunning},

  {P::kRestarting,  kSyncOnly,      kSync,       kNone, 0, R::kRestartCheck,     P::kRestarting},
  {P::kRestarting,  kRestartTarget, kKillTarget, kNone, 0, R::kRestartCheck,     P::kRestarting},
  {P::kRestarting,  kAny,           kKillJob,    kNone, 0, R::kRestartCheck,     P::kRestarting},

  {P::kAborting,    kResume,        kKillJob,    kSoft, 1, R::kSet,              P::kRestarting},
  {P::kAborting,    kAny,           kKillJob,    kSoft, 0, R::kWhenDrained,      P::kAborted},

  {P::kAborted,     kResume,        kKillJob,    kSoft, 1, R::kSet,              P::kRestarting},
  {P::kAborted,     kAny,           kKillJob,    kSoft, 0, R::kKeep,             P::kAborted},

  {P::kCompleting,  kAny,           kKillJob,    kSoft, 0, R::kWhenDrained,      P::kCompleted},
  {P::kTerminating, kAny,           kKillJob,    kSoft, 0, R::kWhenDrained,      P::kTerminated},

  // Finished: every event re-kills leftover pods (keeping finished ones); the phase stays.
  {P::kCompleted,   kAny,           kKillJob,    kSoft, 0, R::kKeep,             P::kCompleted},
  {P::kFailed,      kAny,           kKillJob,    kSoft, 0, R::kKeep,             P::kFailed},
  {P::kTerminated,  kAny,           kKillJob,    kSoft, 0, R::kKeep,             P::kTerminated},
};
// clang-format on

constexpr bool EveryPhaseHasCatchAll() {
  for (JobPhase phase : kAllJobPhases) {
    bool found = false;
    for (const Row& row : kPhaseTable) found = found || (row.phase == phase && row.actions == kAny);
    if (!found) return false;
  }
  return true;
}
static_assert(EveryPhaseHasCatchAll(), "every phase needs a catch-all row");

const Row& Lookup(JobPhase phase, Action action) {
  for (const Row& row : kPhaseTable) {
    if (row.phase == phase && (row.actions & Bit(action)) != 0) return row;
  }
  // Unreachable while the static_assert above holds.
  BASALT_LOG_ERROR("job phase table has no row", "phase", JobPhaseName(phase), "action",
                   ActionName(action));
  std::abort();
}

Plan PlanFromRow(const Row& row) {
  Plan p;
  p.effect = row.effect;
  p.retain_finished_pods = row.effect == PodEffect::kKillJob && row.retain_finished;
  // Every whole-job kill bumps the version and deletes the PodGroup; every kill runs the
  // plugins' OnJobDelete.
  p.bump_version = row.effect == PodEffect::kKillJob;
  p.delete_pod_group = row.effect == PodEffect::kKillJob;
  p.run_plugins_on_job_delete = row.effect != PodEffect::kSync;
  p.retry_increment = row.retry;
  p.rule = row.rule;
  p.target = row.target;
  return p;
}

}  // namespace

std::string_view PodEffectName(PodEffect effect) {
  switch (effect) {
    case PodEffect::kSync:
      return "SyncJob";
    case PodEffect::kKillJob:
      return "KillJob";
    case PodEffect::kKillTarget:
      return "KillTarget";
  }
  return "SyncJob";
}

bool HandlesAction(Action action) {
  for (const Row& row : kPhaseTable) {
    if (row.actions != kAny && (row.actions & Bit(action)) != 0) return true;
  }
  return false;
}

Plan PlanAction(JobPhase phase, Action action, const api::JobSpec& spec, const JobCounts& status) {
  Plan plan = PlanFromRow(Lookup(phase, action));
  // Last retry: the final run's Succeeded/Failed pods are kept even by RestartJob, so users can
  // inspect why the job failed.
  if (plan.effect == PodEffect::kKillJob && !plan.retain_finished_pods &&
      status.retry_count >= spec.max_retry - 1) {
    plan.retain_finished_pods = true;
  }
  return plan;
}

std::optional<JobPhase> CompletionPhase(const JobCounts& c, const api::JobSpec& spec) {
  const int32_t replicas = spec.TotalReplicas();
  if (replicas == 0) return std::nullopt;
  if (spec.min_success && c.succeeded >= *spec.min_success) return JobPhase::kCompleted;
  if (c.succeeded + c.failed == replicas) {
    if (spec.min_available >= spec.TotalTaskMinAvailable()) {
      for (const auto& task : spec.tasks) {
        if (!task.min_available) continue;
        std::optional<int32_t> succeeded = c.TaskSucceeded(task.name);
        if (succeeded && *succeeded < *task.min_available) return JobPhase::kFailed;
      }
    }
    if (spec.min_success && c.succeeded < *spec.min_success) return JobPhase::kFailed;
    return c.succeeded >= spec.min_available ? JobPhase::kCompleted : JobPhase::kFailed;
  }
  if (c.pending > replicas - spec.min_available) return JobPhase::kPending;
  return std::nullopt;
}

JobPhase RestartCheckPhase(const JobCounts& c, const api::JobSpec& spec) {
  if (c.retry_count >= spec.max_retry) return JobPhase::kFailed;
  if (spec.TotalReplicas() - c.terminating >= c.min_available) return JobPhase::kPending;
  return JobPhase::kRestarting;
}

JobPhase NextPhase(const Plan& plan, JobPhase current, const JobCounts& after,
                   const api::JobSpec& spec) {
  switch (plan.rule) {
    case PhaseRule::kKeep:
      return current;
    case PhaseRule::kSet:
      return plan.target;
    case PhaseRule::kPendingToRunning:
      return spec.min_available <= after.running + after.succeeded + after.failed
                 ? JobPhase::kRunning
                 : current;
    case PhaseRule::kCompletionRules:
      return CompletionPhase(after, spec).value_or(current);
    case PhaseRule::kRestartCheck:
      return RestartCheckPhase(after, spec);
    case PhaseRule::kWhenDrained:
      return after.terminating == 0 && after.pending == 0 && after.running == 0 ? plan.target
                                                                                : current;
  }
  return current;
}

JobCounts ApplyBookkeeping(const Plan& plan, JobCounts counts) {
  if (plan.bump_version) ++counts.version;
  counts.retry_count += plan.retry_increment;
  return counts;
}

Decision Transition(JobPhase phase, Action action, const JobCounts& counts,
                    const api::JobSpec& spec) {
  Decision d;
  d.plan = PlanAction(phase, action, spec, counts);
  JobCounts after = counts;
  after.retry_count += d.plan.retry_increment;
  d.next_phase = NextPhase(d.plan, phase, after, spec);
  return d;
}

bool ShouldKill(const Plan& plan, Action action, const PodSnapshot& pod, const KillTarget& target) {
  if (pod.terminating) return false;
  switch (plan.effect) {
    case PodEffect::kSync:
      return false;
    case PodEffect::kKillJob:
      if (plan.retain_finished_pods && (pod.phase == "Succeeded" || pod.phase == "Failed")) {
        return false;
      }
      return true;
    case PodEffect::kKillTarget:
      switch (action) {
        case Action::kRestartPod:
          return !target.pod.empty() && pod.name == target.pod;
        case Action::kRestartPartition:
          return !target.task.empty() && pod.task == target.task && target.partition &&
                 pod.partition == target.partition;
        default:  // RestartTask
          return !target.task.empty() && pod.task == target.task;
      }
  }
  return false;
}

namespace {

void CountByPhase(JobCounts& c, const PodSnapshot& pod) {
  if (pod.phase == "Pending") {
    ++c.pending;
  } else if (pod.phase == "Running") {
    ++c.running;
  } else if (pod.phase == "Succeeded") {
    ++c.succeeded;
  } else if (pod.phase == "Failed") {
    ++c.failed;
  } else {
    ++c.unknown;
  }
  ++c.task_status_count[pod.task][pod.phase.empty() ? "Unknown" : pod.phase];
}

JobCounts ResetCounters(const JobCounts& base) {
  JobCounts c;
  c.version = base.version;
  c.retry_count = base.retry_count;
  c.min_available = base.min_available;
  return c;
}

}  // namespace

JobCounts CountPods(const std::vector<PodSnapshot>& pods, const JobCounts& base) {
  JobCounts c = ResetCounters(base);
  for (const auto& pod : pods) {
    if (pod.terminating) {
      ++c.terminating;
    } else {
      CountByPhase(c, pod);
    }
  }
  return c;
}

JobCounts AccountKill(const std::vector<PodSnapshot>& pods, const std::vector<std::string>& deleted,
                      const JobCounts& base) {
  std::set<std::string_view> gone(deleted.begin(), deleted.end());
  JobCounts c = ResetCounters(base);
  for (const auto& pod : pods) {
    if (pod.terminating || gone.count(pod.name) > 0) {
      ++c.terminating;
    } else {
      CountByPhase(c, pod);
    }
  }
  return c;
}

}  // namespace basalt::controllers
