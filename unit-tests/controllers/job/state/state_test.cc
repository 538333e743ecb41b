#include "controllers/job/state/state.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;

constexpr Action kRestarts[] = {Action::kRestartTask, Action::kRestartPod,
                                Action::kRestartPartition};

bool IsTargeted(Action a) {
  return a == Action::kRestartTask || a == Action::kRestartPod || a == Action::kRestartPartition;
}

// 3 workers, minAvailable 3, maxRetry 3.
api::JobSpec Spec() {
  return MakeJob("j")
      .MinAvailable(3)
      .MaxRetry(3)
      .Task(MakeTask("worker").Replicas(3))
      .Build()
      .spec();
}

// The expected plan for one row of the reference table, written out independently of the
// implementation's switch.
struct Row {
  PodEffect effect;
  bool retain;
  int32_t retry;
  PhaseRule rule;
  JobPhase target;
};

Row KillJobRow(bool retain, int32_t retry, PhaseRule rule, JobPhase target) {
  return {PodEffect::kKillJob, retain, retry, rule, target};
}

Row ExpectedRow(JobPhase phase, Action a) {
  const bool active = phase == JobPhase::kPending || phase == JobPhase::kRunning;
  if (active) {
    if (a == Action::kRestartJob) {
      return KillJobRow(false, 1, PhaseRule::kSet, JobPhase::kRestarting);
    }
    if (IsTargeted(a)) {
      return {PodEffect::kKillTarget, false, 1, PhaseRule::kSet, JobPhase::kRestarting};
    }
    if (a == Action::kAbortJob) return KillJobRow(true, 0, PhaseRule::kSet, JobPhase::kAborting);
    if (a == Action::kCompleteJob) {
      return KillJobRow(true, 0, PhaseRule::kSet, JobPhase::kCompleting);
    }
    if (a == Action::kTerminateJob) {
      return KillJobRow(true, 0, PhaseRule::kSet, JobPhase::kTerminating);
    }
    return {
        PodEffect::kSync, false, 0,
        phase == JobPhase::kPending ? PhaseRule::kPendingToRunning : PhaseRule::kCompletionRules,
        JobPhase::kPending};
  }
  switch (phase) {
    case JobPhase::kRestarting:
      if (a == Action::kSyncJob) {
        return {PodEffect::kSync, false, 0, PhaseRule::kRestartCheck, JobPhase::kPending};
      }
      if (IsTargeted(a)) {
        return {PodEffect::kKillTarget, false, 0, PhaseRule::kRestartCheck, JobPhase::kPending};
      }
      return KillJobRow(false, 0, PhaseRule::kRestartCheck, JobPhase::kPending);
    case JobPhase::kAborting:
      if (a == Action::kResumeJob)
        return KillJobRow(true, 1, PhaseRule::kSet, JobPhase::kRestarting);
      return KillJobRow(true, 0, PhaseRule::kWhenDrained, JobPhase::kAborted);
    case JobPhase::kAborted:
      if (a == Action::kResumeJob)
        return KillJobRow(true, 1, PhaseRule::kSet, JobPhase::kRestarting);
      return KillJobRow(true, 0, PhaseRule::kKeep, JobPhase::kPending);
    case JobPhase::kCompleting:
      return KillJobRow(true, 0, PhaseRule::kWhenDrained, JobPhase::kCompleted);
    case JobPhase::kTerminating:
      return KillJobRow(true, 0, PhaseRule::kWhenDrained, JobPhase::kTerminated);
    default:  // Completed, Failed, Terminated
      return KillJobRow(true, 0, PhaseRule::kKeep, JobPhase::kPending);
  }
}

TEST_CASE("JobState: every (phase, action) pair follows the reference table",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  JobCounts status;  // retryCount 0: the last-retry rule does not apply
  for (JobPhase phase : kAllJobPhases) {
    for (Action action : kAllActions) {
      INFO(fmt::format("{} + {}", JobPhaseName(phase), ActionName(action)));
      const Row want = ExpectedRow(phase, action);
      const Plan got = PlanAction(phase, action, spec, status);
      CHECK(got.effect == want.effect);
      CHECK(got.retain_finished_pods == want.retain);
      CHECK(got.retry_increment == want.retry);
      CHECK(got.rule == want.rule);
      if (want.rule == PhaseRule::kSet || want.rule == PhaseRule::kWhenDrained) {
        CHECK(got.target == want.target);
      }
      // Every whole-job kill bumps the version and deletes the PodGroup; targeted kills do
      // neither; every kill runs the plugins' OnJobDelete.
      CHECK(got.bump_version == (want.effect == PodEffect::kKillJob));
      CHECK(got.delete_pod_group == (want.effect == PodEffect::kKillJob));
      CHECK(got.run_plugins_on_job_delete == (want.effect != PodEffect::kSync));
    }
  }
}

TEST_CASE("JobState: Pending turns Running once minAvailable pods run or finished",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  struct Case {
    int32_t running, succeeded, failed;
    JobPhase want;
  };
  for (const Case& c : std::vector<Case>{
           {0, 0, 0, JobPhase::kPending},
           {2, 0, 0, JobPhase::kPending},
           {3, 0, 0, JobPhase::kRunning},
           {1, 1, 1, JobPhase::kRunning},
           {0, 3, 0, JobPhase::kRunning},
       }) {
    JobCounts counts;
    counts.running = c.running;
    counts.succeeded = c.succeeded;
    counts.failed = c.failed;
    for (Action a : {Action::kSyncJob, Action::kResumeJob, Action::kEnqueueJob, Action::kOther}) {
      INFO(fmt::format("{}/{}/{} {}", c.running, c.succeeded, c.failed, ActionName(a)));
      CHECK(Transition(JobPhase::kPending, a, counts, spec).next_phase == c.want);
    }
  }
}

TEST_CASE("JobState: Running restart, abort, complete and terminate move to their phases",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  JobCounts counts;
  counts.running = 3;
  CHECK(Transition(JobPhase::kRunning, Action::kRestartJob, counts, spec).next_phase ==
        JobPhase::kRestarting);
  for (Action a : kRestarts) {
    CHECK(Transition(JobPhase::kRunning, a, counts, spec).next_phase == JobPhase::kRestarting);
  }
  CHECK(Transition(JobPhase::kRunning, Action::kAbortJob, counts, spec).next_phase ==
        JobPhase::kAborting);
  CHECK(Transition(JobPhase::kRunning, Action::kCompleteJob, counts, spec).next_phase ==
        JobPhase::kCompleting);
  CHECK(Transition(JobPhase::kRunning, Action::kTerminateJob, counts, spec).next_phase ==
        JobPhase::kTerminating);
}

TEST_CASE("JobState: draining phases finish once no pod is pending, running or terminating",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  struct Case {
    JobPhase from;
    JobPhase done;
  };
  for (const Case& c : std::vector<Case>{{JobPhase::kAborting, JobPhase::kAborted},
                                         {JobPhase::kCompleting, JobPhase::kCompleted},
                                         {JobPhase::kTerminating, JobPhase::kTerminated}}) {
    INFO(JobPhaseName(c.from));
    JobCounts drained;
    drained.succeeded = 2;
    drained.failed = 1;
    CHECK(Transition(c.from, Action::kSyncJob, drained, spec).next_phase == c.done);
    for (int field = 0; field < 3; ++field) {
      JobCounts busy = drained;
      (field == 0 ? busy.pending : field == 1 ? busy.running : busy.terminating) = 1;
      CHECK(Transition(c.from, Action::kSyncJob, busy, spec).next_phase == c.from);
    }
  }
}

TEST_CASE("JobState: ResumeJob restarts an aborting or aborted job and consumes a retry",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  JobCounts counts;
  counts.retry_count = 1;
  for (JobPhase p : {JobPhase::kAborting, JobPhase::kAborted}) {
    Decision d = Transition(p, Action::kResumeJob, counts, spec);
    CHECK(d.next_phase == JobPhase::kRestarting);
    CHECK(d.plan.retry_increment == 1);
    CHECK(ApplyBookkeeping(d.plan, counts).retry_count == 2);
  }
  // Aborted ignores every other action.
  CHECK(Transition(JobPhase::kAborted, Action::kRestartJob, counts, spec).next_phase ==
        JobPhase::kAborted);
}

TEST_CASE("JobState: finished jobs never leave their phase", "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  JobCounts counts;
  counts.running = 1;  // even with a straggler pod
  for (JobPhase p : {JobPhase::kCompleted, JobPhase::kFailed, JobPhase::kTerminated}) {
    for (Action a : kAllActions) {
      INFO(fmt::format("{} + {}", JobPhaseName(p), ActionName(a)));
      CHECK(Transition(p, a, counts, spec).next_phase == p);
    }
  }
}

TEST_CASE("JobState: Restarting fails when retries are used up, else waits for pods to go",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();  // 3 replicas, maxRetry 3
  struct Case {
    int32_t retry_count;
    int32_t terminating;
    int32_t status_min_available;
    JobPhase want;
  };
  for (const Case& c : std::vector<Case>{
           {3, 0, 3, JobPhase::kFailed},
           {4, 3, 3, JobPhase::kFailed},
           {2, 0, 3, JobPhase::kPending},
           {2, 1, 3, JobPhase::kRestarting},  // 3 - 1 < 3
           {2, 1, 2, JobPhase::kPending},
           {0, 3, 0, JobPhase::kPending},
       }) {
    INFO(fmt::format("retry {} terminating {} minAvailable {}", c.retry_count, c.terminating,
                     c.status_min_available));
    JobCounts counts;
    counts.retry_count = c.retry_count;
    counts.terminating = c.terminating;
    counts.min_available = c.status_min_available;
    CHECK(RestartCheckPhase(counts, spec) == c.want);
    for (Action a :
         {Action::kSyncJob, Action::kRestartTask, Action::kRestartJob, Action::kAbortJob}) {
      CHECK(Transition(JobPhase::kRestarting, a, counts, spec).next_phase == c.want);
    }
  }
}

TEST_CASE("JobState: an eviction answered by RestartJob consumes a retry (as in Volcano)",
          "[controllers][job][state]") {
  // policies: [{event: PodEvicted, action: RestartJob}] and maxRetry 3: the scheduler's third
  // preemption of the job fails it (docs/scheduler.md, "Does an eviction count towards
  // maxRetry?").
  const api::JobSpec spec = Spec();
  JobCounts counts;
  for (int eviction = 1; eviction <= 3; ++eviction) {
    INFO(fmt::format("eviction {}", eviction));
    Decision d = Transition(JobPhase::kRunning, Action::kRestartJob, counts, spec);
    CHECK(d.next_phase == JobPhase::kRestarting);
    counts = ApplyBookkeeping(d.plan, counts);
    CHECK(counts.retry_count == eviction);
    const JobPhase after =
        Transition(JobPhase::kRestarting, Action::kSyncJob, counts, spec).next_phase;
    CHECK(after == (eviction < 3 ? JobPhase::kPending : JobPhase::kFailed));
  }
}

TEST_CASE("JobState: the last retry keeps finished pods even for RestartJob",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();  // maxRetry 3
  JobCounts counts;
  counts.retry_count = 1;
  CHECK_FALSE(
      PlanAction(JobPhase::kRunning, Action::kRestartJob, spec, counts).retain_finished_pods);
  CHECK_FALSE(PlanAction(JobPhase::kRestarting, Action::kOther, spec, counts).retain_finished_pods);
  counts.retry_count = 2;  // >= maxRetry - 1
  CHECK(PlanAction(JobPhase::kRunning, Action::kRestartJob, spec, counts).retain_finished_pods);
  CHECK(PlanAction(JobPhase::kPending, Action::kRestartJob, spec, counts).retain_finished_pods);
  CHECK(PlanAction(JobPhase::kRestarting, Action::kOther, spec, counts).retain_finished_pods);
}

TEST_CASE("JobState: whole-job kills bump the version, retries count restarts",
          "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  JobCounts counts;
  counts.version = 4;
  counts.retry_count = 1;
  JobCounts after =
      ApplyBookkeeping(PlanAction(JobPhase::kRunning, Action::kRestartJob, spec, counts), counts);
  CHECK(after.version == 5);
  CHECK(after.retry_count == 2);
  after =
      ApplyBookkeeping(PlanAction(JobPhase::kRunning, Action::kRestartTask, spec, counts), counts);
  CHECK(after.version == 4);
  CHECK(after.retry_count == 2);
  // A finished job's re-kill still bumps the version (Volcano-compatible).
  after =
      ApplyBookkeeping(PlanAction(JobPhase::kCompleted, Action::kSyncJob, spec, counts), counts);
  CHECK(after.version == 5);
  CHECK(after.retry_count == 1);
}

TEST_CASE("JobState: an empty or unknown phase is handled as Pending",
          "[controllers][job][state]") {
  CHECK(ParseJobPhase("") == JobPhase::kPending);
  CHECK(ParseJobPhase("Bogus") == JobPhase::kPending);
  for (JobPhase p : kAllJobPhases) CHECK(ParseJobPhase(JobPhaseName(p)) == p);
}

// ---- Completion rules ----------------------------------------------------------------------

struct CompletionCase {
  std::string name;
  api::JobSpec spec;
  JobCounts counts;
  std::optional<JobPhase> want;
};

JobCounts Counts(int32_t pending, int32_t running, int32_t succeeded, int32_t failed) {
  JobCounts c;
  c.pending = pending;
  c.running = running;
  c.succeeded = succeeded;
  c.failed = failed;
  return c;
}

JobCounts WithTask(JobCounts c, const std::string& task, int32_t succeeded, int32_t failed) {
  c.task_status_count[task]["Succeeded"] = succeeded;
  c.task_status_count[task]["Failed"] = failed;
  return c;
}

TEST_CASE("JobState: completion rules of a running job", "[controllers][job][state]") {
  const api::JobSpec plain = Spec();  // 3 workers, minAvailable 3
  const api::JobSpec min_success = MakeJob("j")
                                       .MinAvailable(1)
                                       .MinSuccess(2)
                                       .Task(MakeTask("worker").Replicas(4))
                                       .Build()
                                       .spec();
  // master minAvailable 1 + workers minAvailable 2 = 3 = spec.minAvailable: task minimums apply.
  const api::JobSpec task_min = MakeJob("j")
                                    .MinAvailable(3)
                                    .Task(MakeTask("master").Replicas(1).MinAvailable(1))
                                    .Task(MakeTask("worker").Replicas(3).MinAvailable(2))
                                    .Build()
                                    .spec();
  // spec.minAvailable 2 < Σ task minAvailable 3: task minimums are not checked.
  const api::JobSpec loose = MakeJob("j")
                                 .MinAvailable(2)
                                 .Task(MakeTask("master").Replicas(1).MinAvailable(1))
                                 .Task(MakeTask("worker").Replicas(3).MinAvailable(2))
                                 .Build()
                                 .spec();
  const api::JobSpec empty = MakeJob("j").MinAvailable(0).Build().spec();

  const std::vector<CompletionCase> cases = {
      {"no replicas: no change", empty, Counts(0, 0, 0, 0), std::nullopt},
      {"still running: no change", plain, Counts(0, 3, 0, 0), std::nullopt},
      {"all succeeded", plain, Counts(0, 0, 3, 0), JobPhase::kCompleted},
      {"finished, too few succeeded", plain, Counts(0, 0, 2, 1), JobPhase::kFailed},
      {"all failed", plain, Counts(0, 0, 0, 3), JobPhase::kFailed},
      {"too many pending: back to Pending", plain, Counts(1, 2, 0, 0), JobPhase::kPending},
      {"minSuccess reached with pods still running", min_success, Counts(0, 2, 2, 0),
       JobPhase::kCompleted},
      {"minSuccess not reached when all finished", min_success, Counts(0, 0, 1, 3),
       JobPhase::kFailed},
      {"minSuccess overrides minAvailable", min_success, Counts(0, 0, 1, 3), JobPhase::kFailed},
      {"task minAvailable met", task_min,
       WithTask(WithTask(Counts(0, 0, 3, 1), "master", 1, 0), "worker", 2, 1),
       JobPhase::kCompleted},
      {"task minAvailable missed", task_min,
       WithTask(WithTask(Counts(0, 0, 3, 1), "master", 0, 1), "worker", 3, 0), JobPhase::kFailed},
      {"task absent from taskStatusCount is not checked", task_min,
       WithTask(Counts(0, 0, 3, 1), "worker", 3, 0), JobPhase::kCompleted},
      {"task minimums skipped when spec.minAvailable is lower", loose,
       WithTask(WithTask(Counts(0, 0, 3, 1), "master", 0, 1), "worker", 3, 0),
       JobPhase::kCompleted},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(CompletionPhase(c.counts, c.spec) == c.want);
    CHECK(Transition(JobPhase::kRunning, Action::kSyncJob, c.counts, c.spec).next_phase ==
          c.want.value_or(JobPhase::kRunning));
  }
}

// ---- Kill selection and accounting ---------------------------------------------------------

std::vector<PodSnapshot> Pods() {
  return {
      {"j-master-0", "master", "Succeeded", false, std::nullopt},
      {"j-worker-0", "worker", "Running", false, 0},
      {"j-worker-1", "worker", "Failed", false, 0},
      {"j-worker-2", "worker", "Pending", false, 1},
      {"j-worker-3", "worker", "Running", true, 1},
  };
}

std::vector<std::string> Killed(const Plan& plan, Action action, const KillTarget& target) {
  std::vector<std::string> out;
  for (const auto& p : Pods()) {
    if (ShouldKill(plan, action, p, target)) out.push_back(p.name);
  }
  return out;
}

TEST_CASE("JobState: kills select the pods of their scope", "[controllers][job][state]") {
  const api::JobSpec spec = Spec();
  JobCounts status;
  using V = std::vector<std::string>;
  // retain none: everything not already terminating.
  CHECK(Killed(PlanAction(JobPhase::kRunning, Action::kRestartJob, spec, status),
               Action::kRestartJob,
               {}) == V{"j-master-0", "j-worker-0", "j-worker-1", "j-worker-2"});
  // retain soft: Succeeded and Failed pods stay.
  CHECK(Killed(PlanAction(JobPhase::kRunning, Action::kAbortJob, spec, status), Action::kAbortJob,
               {}) == V{"j-worker-0", "j-worker-2"});
  // targeted.
  CHECK(Killed(PlanAction(JobPhase::kRunning, Action::kRestartTask, spec, status),
               Action::kRestartTask,
               {"worker", "", std::nullopt}) == V{"j-worker-0", "j-worker-1", "j-worker-2"});
  CHECK(Killed(PlanAction(JobPhase::kRunning, Action::kRestartPod, spec, status),
               Action::kRestartPod, {"worker", "j-worker-1", std::nullopt}) == V{"j-worker-1"});
  CHECK(Killed(PlanAction(JobPhase::kRunning, Action::kRestartPartition, spec, status),
               Action::kRestartPartition, {"worker", "", 1}) == V{"j-worker-2"});
  // sync kills nothing.
  CHECK(Killed(PlanAction(JobPhase::kRunning, Action::kSyncJob, spec, status), Action::kSyncJob,
               {}) == V{});
}

TEST_CASE("JobState: succeeded and failed counts survive a kill", "[controllers][job][state]") {
  JobCounts base;
  base.version = 2;
  base.retry_count = 1;
  base.min_available = 3;
  // An AbortJob (retain soft) deleted the running and pending workers.
  JobCounts after = AccountKill(Pods(), {"j-worker-0", "j-worker-2"}, base);
  CHECK(after.succeeded == 1);
  CHECK(after.failed == 1);
  CHECK(after.terminating == 3);  // two deleted + one already terminating
  CHECK(after.running == 0);
  CHECK(after.pending == 0);
  CHECK(after.version == 2);
  CHECK(after.retry_count == 1);
  CHECK(after.min_available == 3);
  CHECK(after.TaskSucceeded("master") == 1);
  CHECK(after.task_status_count["worker"]["Failed"] == 1);

  // A failed deletion leaves the pod counted by phase.
  after = AccountKill(Pods(), {"j-worker-0"}, base);
  CHECK(after.pending == 1);
  CHECK(after.terminating == 2);

  // The finished job drained: Aborting -> Aborted on these counts.
  JobCounts drained = AccountKill(Pods(), {"j-worker-0", "j-worker-2"}, base);
  drained.terminating = 0;
  CHECK(Transition(JobPhase::kAborting, Action::kSyncJob, drained, Spec()).next_phase ==
        JobPhase::kAborted);
}

TEST_CASE("JobState: CountPods counts terminating pods apart", "[controllers][job][state]") {
  JobCounts c = CountPods(Pods(), JobCounts{});
  CHECK(c.succeeded == 1);
  CHECK(c.failed == 1);
  CHECK(c.running == 1);
  CHECK(c.pending == 1);
  CHECK(c.terminating == 1);
  CHECK(c.task_status_count["worker"]["Running"] == 1);
}

}  // namespace
}  // namespace basalt::controllers
