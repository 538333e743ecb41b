// Drives whole job lifecycles through the pure pieces in the order a reconcile loop uses them
// (controllers/job/README.md), with an in-memory stand-in for the API server's pods and
// PodGroup. Checks what a user would see: phases, counters, retries, versions.

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/api/vocabulary.h"
#include "controllers/job/pods/pod_group.h"
#include "controllers/job/pods/pods.h"
#include "controllers/job/policy/policy.h"
#include "controllers/job/state/state.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;
using testing::OnEvents;

class FakeCluster {
 public:
  explicit FakeCluster(api::Job job) : job_(std::move(job)) {}

  // One reconcile of `request`; returns the action that ran.
  Action Reconcile(const JobRequest& request) {
    const ResolvedAction resolved = ResolvePolicy(job_, request);
    const JobPhase phase = job_.phase();
    const bool initiated = !job_.status().state.phase.empty();
    JobCounts counts = CountsFromApi(job_.status());
    const Plan plan = PlanAction(phase, resolved.action, job_.spec(), counts);
    JobCounts after;
    if (plan.effect == PodEffect::kSync) {
      if (!initiated || phase == JobPhase::kPending) {
        if (!initiated) counts.min_available = job_.spec().min_available;
        if (!pod_group_) pod_group_ = BuildPodGroup(job_, {}).ok();  // admitted at once
      }
      if (pod_group_) {
        const PodSyncPlan sync = PlanPodSync(job_, Snapshots());
        for (const auto& c : sync.create) {
          auto pod = BuildPod(job_, *job_.spec().FindTask(c.task), c.index);
          REQUIRE(pod.ok());
          const std::string name = MakePodName(job_.name(), c.task, c.index);
          pods_[name] = {name, c.task, "Pending", false, std::nullopt, false, false};
          versions_[name] = std::stoi(testing::StringAt(
              *pod, {"metadata", "annotations", std::string(api::kJobVersionKey)}));
        }
        for (const auto& name : sync.remove) pods_[name].terminating = true;
      }
      after = CountPods(Snapshots(), counts);
    } else {
      const KillTarget target{request.task, request.pod, std::nullopt};
      std::vector<std::string> deleted;
      for (const auto& p : Snapshots()) {
        if (ShouldKill(plan, resolved.action, p, target)) deleted.push_back(p.name);
      }
      after = AccountKill(Snapshots(), deleted, counts);
      for (const auto& name : deleted) pods_[name].terminating = true;
      if (plan.delete_pod_group) pod_group_ = false;
    }
    after = ApplyBookkeeping(plan, after);
    const JobPhase next =
        NextPhase(plan, initiated ? phase : JobPhase::kPending, after, job_.spec());
    // What the status write would leave in the Job.
    api::JobStatus status = job_.status();
    status.state.phase = std::string(JobPhaseName(next));
    status.pending = after.pending;
    status.running = after.running;
    status.succeeded = after.succeeded;
    status.failed = after.failed;
    status.terminating = after.terminating;
    status.unknown = after.unknown;
    status.version = after.version;
    status.retry_count = after.retry_count;
    status.min_available = after.min_available;
    status.task_status_count = after.task_status_count;
    job_.SetStatus(status);
    return resolved.action;
  }

  JobRequest Sync() const { return JobRequest{}; }
  // A pod event as the handlers would produce it.
  JobRequest PodEvent(const std::string& pod, Event event) const {
    JobRequest r;
    r.job_uid = job_.uid();
    r.pod = pod;
    r.task = pods_.at(pod).task;
    r.event = event;
    r.job_version = versions_.at(pod);
    if (event == Event::kPodFailed) r.exit_code = 1;
    return r;
  }

  void SetPhase(const std::string& pod, const std::string& phase) { pods_.at(pod).phase = phase; }
  void SetAll(const std::string& phase) {
    for (auto& [name, p] : pods_) {
      if (!p.terminating) p.phase = phase;
    }
  }
  // The kubelet finishes deleting terminating pods.
  void FinishDeletions() {
    std::erase_if(pods_, [](const auto& kv) { return kv.second.terminating; });
  }

  const api::Job& job() const { return job_; }
  JobPhase phase() const { return job_.phase(); }
  bool has_pod_group() const { return pod_group_; }
  size_t live_pods() const {
    size_t n = 0;
    for (const auto& [name, p] : pods_) n += p.terminating ? 0 : 1;
    return n;
  }
  int version_of(const std::string& pod) const { return versions_.at(pod); }

 private:
  std::vector<PodSnapshot> Snapshots() const {
    std::vector<PodSnapshot> out;
    for (const auto& [name, p] : pods_) out.push_back(p);
    return out;
  }

  api::Job job_;
  bool pod_group_ = false;
  std::map<std::string, PodSnapshot> pods_;
  std::map<std::string, int> versions_;
};

api::Job TrainingJob(int32_t max_retry) {
  return MakeJob("train")
      .MinAvailable(3)
      .MaxRetry(max_retry)
      .Task(MakeTask("master").Replicas(1).Policy(OnEvents({Event::kTaskCompleted}, "CompleteJob")))
      .Task(MakeTask("worker").Replicas(2))
      .Policy(OnEvents({Event::kPodFailed}, "RestartJob"))
      .Build();
}

TEST_CASE("JobLifecycle: restart on failure, then complete when the master finishes",
          "[controllers][job][lifecycle]") {
  FakeCluster c(TrainingJob(3));
  c.Reconcile(c.Sync());
  CHECK(c.phase() == JobPhase::kPending);
  CHECK(c.has_pod_group());
  CHECK(c.live_pods() == 3);
  CHECK(c.job().status().pending == 3);

  c.SetAll("Running");
  c.Reconcile(c.PodEvent("train-worker-0", Event::kPodRunning));
  CHECK(c.phase() == JobPhase::kRunning);

  // A worker fails: RestartJob kills everything and drops the PodGroup.
  c.SetPhase("train-worker-1", "Failed");
  CHECK(c.Reconcile(c.PodEvent("train-worker-1", Event::kPodFailed)) == Action::kRestartJob);
  CHECK(c.phase() == JobPhase::kRestarting);
  CHECK(c.job().status().retry_count == 1);
  CHECK(c.job().status().version == 1);
  CHECK(c.job().status().terminating == 3);
  CHECK_FALSE(c.has_pod_group());

  // Still terminating: stays Restarting; once gone: back to Pending, re-initiated.
  c.Reconcile(c.Sync());
  CHECK(c.phase() == JobPhase::kRestarting);
  c.FinishDeletions();
  c.Reconcile(c.Sync());
  CHECK(c.phase() == JobPhase::kPending);
  c.Reconcile(c.Sync());
  CHECK(c.has_pod_group());
  CHECK(c.live_pods() == 3);
  CHECK(c.version_of("train-worker-1") == 1);  // new pods carry the new version

  c.SetAll("Running");
  c.Reconcile(c.PodEvent("train-master-0", Event::kPodRunning));
  CHECK(c.phase() == JobPhase::kRunning);

  // The master finishes: CompleteJob keeps it and kills the workers.
  c.SetPhase("train-master-0", "Succeeded");
  CHECK(c.Reconcile(c.PodEvent("train-master-0", Event::kTaskCompleted)) == Action::kCompleteJob);
  CHECK(c.phase() == JobPhase::kCompleting);
  CHECK(c.job().status().succeeded == 1);
  CHECK(c.job().status().terminating == 2);
  c.FinishDeletions();
  c.Reconcile(c.Sync());
  CHECK(c.phase() == JobPhase::kCompleted);
  // Counts survive the kills (ARCHITECTURE decision 10).
  CHECK(c.job().status().succeeded == 1);
  CHECK(c.job().status().retry_count == 1);

  // A finished job stays finished whatever happens next.
  c.Reconcile(c.PodEvent("train-master-0", Event::kPodFailed));
  CHECK(c.phase() == JobPhase::kCompleted);
  CHECK(c.job().status().succeeded == 1);
}

TEST_CASE("JobLifecycle: events from pods of an earlier run are ignored",
          "[controllers][job][lifecycle]") {
  FakeCluster c(TrainingJob(3));
  c.Reconcile(c.Sync());
  c.SetAll("Running");
  c.Reconcile(c.PodEvent("train-worker-0", Event::kPodRunning));
  c.SetPhase("train-worker-0", "Failed");
  JobRequest late = c.PodEvent("train-worker-0", Event::kPodFailed);  // version 0
  c.Reconcile(late);
  REQUIRE(c.job().status().version == 1);
  c.FinishDeletions();
  c.Reconcile(c.Sync());
  c.Reconcile(c.Sync());
  REQUIRE(c.phase() == JobPhase::kPending);
  // The same failure reported again (e.g. a delayed watch event) must not restart again.
  CHECK(c.Reconcile(late) == Action::kSyncJob);
  CHECK(c.job().status().retry_count == 1);
}

TEST_CASE("JobLifecycle: a job that keeps failing ends Failed, keeping its failed pods",
          "[controllers][job][lifecycle]") {
  FakeCluster c(TrainingJob(2));
  for (int attempt = 0; attempt < 2; ++attempt) {
    INFO("attempt " << attempt);
    c.Reconcile(c.Sync());
    c.Reconcile(c.Sync());
    REQUIRE(c.live_pods() == 3);
    c.SetAll("Running");
    c.Reconcile(c.PodEvent("train-worker-0", Event::kPodRunning));
    REQUIRE(c.phase() == JobPhase::kRunning);
    c.SetPhase("train-worker-0", "Failed");
    c.Reconcile(c.PodEvent("train-worker-0", Event::kPodFailed));
    REQUIRE(c.phase() == JobPhase::kRestarting);
    c.FinishDeletions();
    c.Reconcile(c.Sync());
  }
  CHECK(c.phase() == JobPhase::kFailed);
  CHECK(c.job().status().retry_count == 2);
  // The last attempt's kill kept the failed pod for inspection.
  CHECK(c.job().status().failed == 1);
  CHECK(c.live_pods() == 1);
}

}  // namespace
}  // namespace basalt::controllers
