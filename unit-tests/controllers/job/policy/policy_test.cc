#include "controllers/job/policy/policy.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using std::chrono::milliseconds;
using testing::MakeJob;
using testing::MakeTask;
using testing::OnEvents;
using testing::OnExitCode;

JobRequest PodRequest(std::string task, Event event, std::optional<int32_t> exit_code = {},
                      std::optional<int32_t> version = 0) {
  JobRequest r;
  r.job_uid = "uid-1";
  r.task = std::move(task);
  r.pod = "j-" + r.task + "-0";
  r.event = event;
  r.exit_code = exit_code;
  r.job_version = version;
  return r;
}

// master: TaskCompleted -> CompleteJob; PodFailed -> RestartTask.
// worker: exitCode 3 -> AbortJob; PodPending after 10m -> RestartJob; PodPending (no timeout).
// job:    PodFailed -> RestartJob; PodEvicted,Unknown -> TerminateJob; * -> ... none.
api::Job Job() {
  return MakeJob("j")
      .Version(2)
      .Task(MakeTask("master")
                .Replicas(1)
                .Policy(OnEvents({Event::kTaskCompleted}, "CompleteJob"))
                .Policy(OnEvents({Event::kPodFailed}, "RestartTask")))
      .Task(MakeTask("worker")
                .Replicas(2)
                .Policy(OnExitCode(3, "AbortJob"))
                .Policy(OnEvents({Event::kPodPending}, "TerminateJob"))
                .Policy(OnEvents({Event::kPodPending}, "RestartJob", milliseconds(600000))))
      .Task(MakeTask("ps").Replicas(1))
      .Policy(OnEvents({Event::kPodFailed}, "RestartJob"))
      .Policy(OnEvents({Event::kPodEvicted, Event::kUnknown}, "TerminateJob"))
      .Build();
}

struct Case {
  std::string name;
  JobRequest request;
  Action want;
  PolicySource source;
  milliseconds delay{0};
};

TEST_CASE("JobPolicy: resolution order and matching rules", "[controllers][job][policy]") {
  const api::Job job = Job();
  JobRequest command = PodRequest("", Event::kCommandIssued, {}, std::nullopt);
  command.action = "ResumeJob";
  JobRequest stale_uid = PodRequest("worker", Event::kPodFailed, 3, 2);
  stale_uid.job_uid = "uid-0";
  JobRequest pod_group_unknown = PodRequest("", Event::kUnknown, {}, std::nullopt);

  const std::vector<Case> cases = {
      {"an explicit command action wins", command, Action::kResumeJob, PolicySource::kCommand},
      {"OutOfSync is a plain sync", PodRequest("master", Event::kOutOfSync, {}, 2),
       Action::kSyncJob, PolicySource::kInternal},
      {"PodRunning is a plain sync", PodRequest("master", Event::kPodRunning, {}, 2),
       Action::kSyncJob, PolicySource::kInternal},
      {"CommandIssued without action is a plain sync",
       PodRequest("", Event::kCommandIssued, {}, std::nullopt), Action::kSyncJob,
       PolicySource::kInternal},
      {"a pod of another job UID is ignored", stale_uid, Action::kSyncJob, PolicySource::kStaleJob},
      {"a pod of an earlier version is ignored", PodRequest("master", Event::kPodFailed, 1, 1),
       Action::kSyncJob, PolicySource::kStaleVersion},
      {"the task policy wins over the job policy", PodRequest("master", Event::kPodFailed, 1, 2),
       Action::kRestartTask, PolicySource::kTaskPolicy},
      {"a task without a matching policy falls back to the job policy",
       PodRequest("ps", Event::kPodFailed, 1, 2), Action::kRestartJob, PolicySource::kJobPolicy},
      {"exitCode matches before the job's event policy",
       PodRequest("worker", Event::kPodFailed, 3, 2), Action::kAbortJob, PolicySource::kTaskPolicy},
      {"a different exit code falls through to the job policy",
       PodRequest("worker", Event::kPodFailed, 4, 2), Action::kRestartJob,
       PolicySource::kJobPolicy},
      {"events[] lists match", PodRequest("worker", Event::kPodEvicted, {}, 2),
       Action::kTerminateJob, PolicySource::kJobPolicy},
      {"PodPending matches only policies with a timeout",
       PodRequest("worker", Event::kPodPending, {}, 2), Action::kRestartJob,
       PolicySource::kTaskPolicy, milliseconds(600000)},
      {"TaskCompleted", PodRequest("master", Event::kTaskCompleted, {}, 2), Action::kCompleteJob,
       PolicySource::kTaskPolicy},
      {"no policy: SyncJob", PodRequest("ps", Event::kTaskCompleted, {}, 2), Action::kSyncJob,
       PolicySource::kDefault},
      {"PodGroup Unknown fires after a restart (no pod version)", pod_group_unknown,
       Action::kTerminateJob, PolicySource::kJobPolicy},
      {"a plain sync matches no event policy", PodRequest("", Event::kNone, {}, std::nullopt),
       Action::kSyncJob, PolicySource::kDefault},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ResolvedAction r = ResolvePolicy(job, c.request);
    CHECK(r.action == c.want);
    CHECK(r.source == c.source);
    CHECK(r.delay == c.delay);
    CHECK_FALSE(r.cause.empty());
  }
}

TEST_CASE("JobPolicy: '*' matches any event, but PodPending only with a timeout",
          "[controllers][job][policy]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("w").Replicas(1))
                     .Policy(OnEvents({Event::kAny}, "RestartJob"))
                     .Build();
  for (Event e : {Event::kPodFailed, Event::kPodEvicted, Event::kUnknown, Event::kTaskCompleted,
                  Event::kTaskFailed, Event::kJobUpdated}) {
    INFO(EventName(e));
    CHECK(ResolvePolicy(job, PodRequest("w", e)).action == Action::kRestartJob);
  }
  CHECK(ResolvePolicy(job, PodRequest("w", Event::kPodPending)).action == Action::kSyncJob);
  job = MakeJob("j")
            .Task(MakeTask("w").Replicas(1))
            .Policy(OnEvents({Event::kAny}, "RestartJob", milliseconds(5000)))
            .Build();
  ResolvedAction r = ResolvePolicy(job, PodRequest("w", Event::kPodPending));
  CHECK(r.action == Action::kRestartJob);
  CHECK(r.delay == milliseconds(5000));
}

TEST_CASE("JobPolicy: a policy exitCode never matches a request without one",
          "[controllers][job][policy]") {
  api::Job job =
      MakeJob("j").Task(MakeTask("w").Replicas(1)).Policy(OnExitCode(1, "AbortJob")).Build();
  CHECK(ResolvePolicy(job, PodRequest("w", Event::kPodEvicted)).action == Action::kSyncJob);
  CHECK(ResolvePolicy(job, PodRequest("w", Event::kPodFailed, 1)).action == Action::kAbortJob);
}

TEST_CASE("JobPolicy: the first matching policy wins", "[controllers][job][policy]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("w").Replicas(1))
                     .Policy(OnEvents({Event::kPodFailed}, "AbortJob"))
                     .Policy(OnEvents({Event::kPodFailed}, "RestartJob"))
                     .Build();
  CHECK(ResolvePolicy(job, PodRequest("w", Event::kPodFailed, 1)).action == Action::kAbortJob);
}

TEST_CASE("JobPolicy: unknown action strings are kept verbatim", "[controllers][job][policy]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("w").Replicas(1))
                     .Policy(OnEvents({Event::kPodFailed}, "ExplodeJob"))
                     .Build();
  ResolvedAction r = ResolvePolicy(job, PodRequest("w", Event::kPodFailed, 1));
  CHECK(r.action == Action::kOther);
  CHECK(r.action_name == "ExplodeJob");
}

TEST_CASE("JobPolicy: event texts name the action and the delay", "[controllers][job][policy]") {
  const api::Job job = Job();
  ResolvedAction now = ResolvePolicy(job, PodRequest("master", Event::kPodFailed, 1, 2));
  CHECK(now.event_reason() == "ExecuteAction");
  CHECK(now.event_message() == "Start to execute action RestartTask");
  CHECK(now.cause ==
        "PodFailed (exit code 1) of pod ns/j-master-0 (task master) matched task policy "
        "PodFailed -> RestartTask");
  ResolvedAction later = ResolvePolicy(job, PodRequest("worker", Event::kPodPending, {}, 2));
  CHECK(later.event_message() == "Execute action RestartJob after 10m0s");
  ResolvedAction sync = ResolvePolicy(job, PodRequest("ps", Event::kPodRunning, {}, 2));
  CHECK(sync.event_reason().empty());
  CHECK(sync.event_message().empty());
}

}  // namespace
}  // namespace basalt::controllers
