#include "controllers/job/requests/requests.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/api/vocabulary.h"
#include "controllers/job/pods/pods.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;

// A pod as the controller created it (BuildPod), with a status.
class PodFixture {
 public:
  PodFixture() {
    job_ =
        MakeJob("j").Uid("uid-1").Version(2).Task(MakeTask("w").Replicas(2).Container("c")).Build();
    pod_ = *BuildPod(job_, job_.spec().tasks[0], 1);
    json::Set(pod_, "status", json::Value(rapidjson::kObjectType), A());
  }
  PodFixture& Phase(std::string_view phase) {
    json::Set(Status(), "phase", json::MakeString(phase, A()), A());
    return *this;
  }
  // A container status: restarts, readiness, and an optional terminated exit code.
  PodFixture& Container(int restarts, bool ready, std::optional<int> exit_code = {},
                        bool init = false) {
    const std::string_view list = init ? "initContainerStatuses" : "containerStatuses";
    if (json::Find(Status(), list) == nullptr) {
      json::Set(Status(), list, json::Value(rapidjson::kArrayType), A());
    }
    json::Value cs(rapidjson::kObjectType);
    json::Set(cs, "restartCount", json::Value(restarts), A());
    json::Set(cs, "ready", json::Value(ready), A());
    if (exit_code) {
      json::Value terminated(rapidjson::kObjectType);
      json::Set(terminated, "exitCode", json::Value(*exit_code), A());
      json::Value state(rapidjson::kObjectType);
      json::Set(state, "terminated", std::move(terminated), A());
      json::Set(cs, "state", std::move(state), A());
    }
    json::FindMutable(Status(), list)->PushBack(std::move(cs), A());
    return *this;
  }
  PodFixture& Annotation(std::string_view k, std::string_view v) {
    json::Value& meta = *json::FindMutable(pod_, "metadata");
    json::Set(json::EnsureObject(meta, "annotations", A()), k, json::MakeString(v, A()), A());
    return *this;
  }
  PodFixture& Deleting() {
    json::Set(*json::FindMutable(pod_, "metadata"), "deletionTimestamp",
              json::MakeString("2026-01-01T00:00:00Z", A()), A());
    return *this;
  }
  PodFixture& NoOwner() {
    json::Remove(*json::FindMutable(pod_, "metadata"), "ownerReferences");
    return *this;
  }
  JobPodInfo Info() const {
    auto info = ReadJobPod(pod_);
    REQUIRE(info.has_value());
    return *info;
  }
  const json::Document& pod() const { return pod_; }

 private:
  json::Allocator& A() { return pod_.GetAllocator(); }
  json::Value& Status() { return *json::FindMutable(pod_, "status"); }
  api::Job job_;
  json::Document pod_;
};

TEST_CASE("JobRequests: pods of a job are recognised by owner and annotations",
          "[controllers][job][requests]") {
  JobPodInfo info = PodFixture()
                        .Phase("Running")
                        .Container(1, true)
                        .Container(2, true)
                        .Container(3, false, {}, /*init=*/true)
                        .Info();
  CHECK(info.name == "j-w-1");
  CHECK(info.namespace_name == "ns");
  CHECK(info.job_name == "j");
  CHECK(info.job_uid == "uid-1");
  CHECK(info.task == "w");
  CHECK(info.job_version == 2);
  CHECK(info.phase == "Running");
  CHECK(info.restart_count == 6);
  CHECK(info.ready);
  CHECK_FALSE(info.out_of_sync);
  CHECK_FALSE(info.terminating);

  CHECK_FALSE(ReadJobPod(PodFixture().NoOwner().pod()));
  CHECK_FALSE(ReadJobPod(PodFixture().Annotation(api::kJobVersionKey, "x").pod()));
  CHECK(PodFixture().Phase("Running").Container(0, false).Info().ready == false);
  CHECK(PodFixture().Deleting().Info().terminating);
  CHECK(PodFixture().Annotation(api::kControllerOutOfSyncKey, "true").Info().out_of_sync);
  CHECK(PodFixture()
            .Phase("Failed")
            .Container(0, false, 137)
            .Container(0, false, 1)
            .Info()
            .exit_code == 137);
}

TEST_CASE("JobRequests: pod changes become events", "[controllers][job][requests]") {
  const JobPodInfo pending = PodFixture().Phase("Pending").Info();
  const JobPodInfo running = PodFixture().Phase("Running").Container(0, true).Info();
  const JobPodInfo failed = PodFixture().Phase("Failed").Container(1, false, 3).Info();
  const JobPodInfo succeeded = PodFixture().Phase("Succeeded").Container(0, false, 0).Info();
  const JobPodInfo marked =
      PodFixture().Phase("Running").Annotation(api::kControllerOutOfSyncKey, "true").Info();
  const TaskProgress calm{2, 1, 0, 0};
  const TaskProgress all_done{2, 2, 0, 0};
  const TaskProgress crashing{2, 0, 3, 0};  // maxRetry 0 means 3

  struct Case {
    std::string name;
    JobPodInfo old_pod, new_pod;
    TaskProgress task;
    Event want;
  };
  const std::vector<Case> cases = {
      {"pending -> running", pending, running, calm, Event::kPodRunning},
      {"running -> failed", running, failed, calm, Event::kPodFailed},
      {"failed stays failed", failed, failed, calm, Event::kOutOfSync},
      {"running -> succeeded, task not done", running, succeeded, calm, Event::kOutOfSync},
      {"running -> succeeded, task done", running, succeeded, all_done, Event::kTaskCompleted},
      {"running, restarts exhausted", running, running, crashing, Event::kTaskFailed},
      {"pending -> running wins over TaskFailed", pending, running, crashing, Event::kPodRunning},
      {"pending, restarts exhausted", pending, pending, crashing, Event::kTaskFailed},
      {"running, nothing new", running, running, calm, Event::kOutOfSync},
      {"marked by the controller", running, marked, crashing, Event::kOutOfSync},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    JobRequest r = RequestForPodUpdate(c.old_pod, c.new_pod, c.task);
    CHECK(r.event == c.want);
    CHECK(r.task == "w");
    CHECK(r.pod == "j-w-1");
    CHECK(r.job_uid == "uid-1");
    CHECK(r.job_version == 2);
    CHECK(r.exit_code == (c.want == Event::kPodFailed ? std::optional<int32_t>(3) : std::nullopt));
  }
  CHECK(RequestForPodAdd(pending).event == Event::kPodPending);
  CHECK(RequestForPodAdd(marked).event == Event::kOutOfSync);
}

TEST_CASE("JobRequests: a pod first seen Failed still triggers its PodFailed and exitCode policies",
          "[controllers][job][requests]") {
  // What a controller that just took the Lease over lists: the pod failed (exit code 3) while
  // no controller watched it.
  const JobRequest r = RequestForPodAdd(PodFixture().Phase("Failed").Container(1, false, 3).Info());
  CHECK(r.event == Event::kPodFailed);
  CHECK(r.exit_code == std::optional<int32_t>(3));
  CHECK(r.job_version == 2);
  CHECK(r.pod == "j-w-1");
  CHECK(RequestForPodAdd(PodFixture().Phase("Succeeded").Container(0, false, 0).Info()).event ==
        Event::kPodPending);
  CHECK(RequestForPodAdd(PodFixture()
                             .Phase("Failed")
                             .Container(1, false, 3)
                             .Annotation(api::kControllerOutOfSyncKey, "true")
                             .Info())
            .event == Event::kOutOfSync);
}

TEST_CASE("JobRequests: the controller's own deletions never look like evictions",
          "[controllers][job][requests]") {
  const JobPodInfo running = PodFixture().Phase("Running").Info();
  const JobPodInfo marked =
      PodFixture().Phase("Running").Annotation(api::kControllerOutOfSyncKey, "true").Info();
  CHECK(RequestForPodDelete(running, true).event == Event::kPodEvicted);
  CHECK(RequestForPodDelete(marked, true).event == Event::kOutOfSync);
  CHECK(RequestForPodDelete(running, false).event == Event::kOutOfSync);
  auto patch = json::Parse(OutOfSyncPatch());
  REQUIRE(patch.ok());
  CHECK(testing::StringAt(*patch, {"metadata", "annotations", api::kControllerOutOfSyncKey}) ==
        "true");
}

TEST_CASE("JobRequests: task retry budget", "[controllers][job][requests]") {
  CHECK_FALSE(TaskRetriesExhausted({1, 0, 2, 0}));
  CHECK(TaskRetriesExhausted({1, 0, 3, 0}));
  CHECK_FALSE(TaskRetriesExhausted({1, 0, 4, 5}));
  CHECK(TaskRetriesExhausted({1, 0, 5, 5}));
  CHECK_FALSE(TaskRetriesExhausted({1, 0, 1000, -1}));
  api::TaskSpec task = MakeTask("w").Replicas(3).Build();
  task.max_retry = 4;
  std::vector<JobPodInfo> pods = {
      PodFixture().Phase("Running").Container(2, true).Info(),
      PodFixture().Phase("Pending").Container(1, false).Info(),
      PodFixture().Phase("Failed").Container(9, false, 1).Info(),  // not live: not counted
      PodFixture().Phase("Succeeded").Container(0, false, 0).Info(),
  };
  TaskProgress p = ProgressOf(task, pods);
  CHECK(p.replicas == 3);
  CHECK(p.max_retry == 4);
  CHECK(p.live_pod_restarts == 3);
  CHECK(p.succeeded_pods == 1);
}

TEST_CASE("JobRequests: PodGroup, Job and Command changes", "[controllers][job][requests]") {
  CHECK_FALSE(RequestForPodGroupUpdate("Running", "Running"));
  CHECK(RequestForPodGroupUpdate("Running", "Unknown")->event == Event::kUnknown);
  CHECK(RequestForPodGroupUpdate("Pending", "Inqueue")->event == Event::kNone);
  CHECK_FALSE(RequestForPodGroupUpdate("Pending", "Inqueue")->job_version);

  auto j1 = json::Parse(R"({"metadata":{"resourceVersion":"1"},"spec":{"minAvailable":1},
                            "status":{"state":{"phase":"Running"},"running":1}})");
  auto j1_counters = json::Parse(R"({"metadata":{"resourceVersion":"2"},"spec":{"minAvailable":1},
                                     "status":{"state":{"phase":"Running"},"running":2}})");
  auto j1_phase = json::Parse(R"({"metadata":{"resourceVersion":"2"},"spec":{"minAvailable":1},
                                  "status":{"state":{"phase":"Completed"}}})");
  auto j1_spec = json::Parse(R"({"metadata":{"resourceVersion":"2"},"spec":{"minAvailable":2},
                                 "status":{"state":{"phase":"Running"},"running":1}})");
  CHECK_FALSE(JobUpdateNeedsSync(*j1, *j1));
  CHECK_FALSE(JobUpdateNeedsSync(*j1, *j1_counters));
  CHECK(JobUpdateNeedsSync(*j1, *j1_phase));
  CHECK(JobUpdateNeedsSync(*j1, *j1_spec));

  JobRequest cmd = RequestForCommand("AbortJob");
  CHECK(cmd.event == Event::kCommandIssued);
  CHECK(cmd.action == "AbortJob");
}

TEST_CASE("JobRequests: snapshots carry what the state machine reads",
          "[controllers][job][requests]") {
  PodSnapshot s = ToSnapshot(PodFixture().Phase("Running").Container(0, true).Deleting().Info());
  CHECK(s.name == "j-w-1");
  CHECK(s.task == "w");
  CHECK(s.phase == "Running");
  CHECK(s.terminating);
  CHECK(s.ready);
  CHECK_FALSE(s.out_of_sync);
  CHECK(
      ToSnapshot(PodFixture().Annotation(api::kControllerOutOfSyncKey, "true").Info()).out_of_sync);
}

}  // namespace
}  // namespace basalt::controllers
