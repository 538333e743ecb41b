#include "controllers/job/state/state.h"

#include <algorithm>
#include <set>

namespace basalt::controllers {
namespace {

bool IsTargetedRestart(Action a) {
  return a == Action::kRestartTask || a == Action::kRestartPod || a == Action::kRestartPartition;
}

Plan KillJob(bool retain_finished, PhaseRule rule, JobPhase target, int32_t retry_increment) {
  Plan p;
  p.effect = PodEffect::kKillJob;
  p.retain_finished_pods = retain_finished;
  p.bump_version = true;
  p.delete_pod_group = true;
  p.run_plugins_on_job_delete = true;
  p.retry_increment = retry_increment;
  p.rule = rule;
  p.target = target;
  return p;
}

Plan KillTargetPlan(PhaseRule rule, JobPhase target, int32_t retry_increment) {
  Plan p;
  p.effect = PodEffect::kKillTarget;
  p.run_plugins_on_job_delete = true;
  p.retry_increment = retry_increment;
  p.rule = rule;
  p.target = target;
  return p;
}

Plan Sync(PhaseRule rule) {
  Plan p;
  p.effect = PodEffect::kSync;
  p.rule = rule;
  return p;
}

// The actions Pending and Running share: restarts, abort, complete, terminate.
std::optional<Plan> CommonActivePlan(Action action) {
  switch (action) {
    case Action::kRestartJob:
      return KillJob(false, PhaseRule::kSet, JobPhase::kRestarting, 1);
    case Action::kRestartTask:
    case Action::kRestartPod:
    case Action::kRestartPartition:
      return KillTargetPlan(PhaseRule::kSet, JobPhase::kRestarting, 1);
    case Action::kAbortJob:
      return KillJob(true, PhaseRule::kSet, JobPhase::kAborting, 0);
    case Action::kCompleteJob:
      return KillJob(true, PhaseRule::kSet, JobPhase::kCompleting, 0);
    case Action::kTerminateJob:
      return KillJob(true, PhaseRule::kSet, JobPhase::kTerminating, 0);
    default:
      return std::nullopt;
  }
}

Plan PlanWithoutRetention(JobPhase phase, Action action) {
  switch (phase) {
    case JobPhase::kPending:
      if (auto p = CommonActivePlan(action)) return *p;
      return Sync(PhaseRule::kPendingToRunning);
    case JobPhase::kRunning:
      if (auto p = CommonActivePlan(action)) return *p;
      return Sync(PhaseRule::kCompletionRules);
    case JobPhase::kRestarting:
      if (action == Action::kSyncJob) return Sync(PhaseRule::kRestartCheck);
      if (IsTargetedRestart(action)) return KillTargetPlan(PhaseRule::kRestartCheck, phase, 0);
      return KillJob(false, PhaseRule::kRestartCheck, phase, 0);
    case JobPhase::kAborting:
      if (action == Action::kResumeJob) {
        return KillJob(true, PhaseRule::kSet, JobPhase::kRestarting, 1);
      }
      return KillJob(true, PhaseRule::kWhenDrained, JobPhase::kAborted, 0);
    case JobPhase::kAborted:
      if (action == Action::kResumeJob) {
        return KillJob(true, PhaseRule::kSet, JobPhase::kRestarting, 1);
      }
      return KillJob(true, PhaseRule::kKeep, phase, 0);
    case JobPhase::kCompleting:
      return KillJob(true, PhaseRule::kWhenDrained, JobPhase::kCompleted, 0);
    case JobPhase::kTerminating:
      return KillJob(true, PhaseRule::kWhenDrained, JobPhase::kTerminated, 0);
    case JobPhase::kCompleted:
    case JobPhase::kFailed:
    case JobPhase::kTerminated:
      return KillJob(true, PhaseRule::kKeep, phase, 0);
  }
  return Sync(PhaseRule::kKeep);
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

Plan PlanAction(JobPhase phase, Action action, const JobSpecView& spec, const JobCounts& status) {
  Plan plan = PlanWithoutRetention(phase, action);
  // Last retry: the final run's Succeeded/Failed pods are kept even by RestartJob, so users can
  // inspect why the job failed.
  if (plan.effect == PodEffect::kKillJob && !plan.retain_finished_pods &&
      status.retry_count >= spec.max_retry - 1) {
    plan.retain_finished_pods = true;
  }
  return plan;
}

std::optional<JobPhase> CompletionPhase(const JobCounts& c, const JobSpecView& spec) {
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

JobPhase RestartCheckPhase(const JobCounts& c, const JobSpecView& spec) {
  if (c.retry_count >= spec.max_retry) return JobPhase::kFailed;
  if (spec.TotalReplicas() - c.terminating >= c.min_available) return JobPhase::kPending;
  return JobPhase::kRestarting;
}

JobPhase NextPhase(const Plan& plan, JobPhase current, const JobCounts& after,
                   const JobSpecView& spec) {
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
                    const JobSpecView& spec) {
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
