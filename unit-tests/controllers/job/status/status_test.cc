#include "controllers/job/status/status.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace basalt::controllers {
namespace {

using std::chrono::seconds;

api::Time T(int64_t s) { return api::Time(seconds(1'700'000'000 + s)); }

std::vector<std::string> Phases(const api::JobStatus& s) {
  std::vector<std::string> out;
  for (const auto& c : s.conditions) out.push_back(c.status);
  return out;
}

TEST_CASE("JobStatus: a phase change stamps the time and appends the condition",
          "[controllers][job][status]") {
  api::JobStatus old;  // a new job: empty phase
  StatusUpdate u;
  u.phase = JobPhase::kPending;
  u.spec_min_available = 2;
  auto s = NextJobStatus(old, u, T(0));
  REQUIRE(s);
  CHECK(s->state.phase == "Pending");
  CHECK(s->state.last_transition_time == T(0));
  CHECK(s->min_available == 2);
  CHECK(Phases(*s) == std::vector<std::string>{"Pending"});

  u.phase = JobPhase::kRunning;
  u.counts.running = 2;
  auto running = NextJobStatus(*s, u, T(10));
  REQUIRE(running);
  CHECK(Phases(*running) == std::vector<std::string>{"Pending", "Running"});

  // Restarting, then Pending again: the re-entered phase moves to the end.
  u.phase = JobPhase::kRestarting;
  auto restarting = NextJobStatus(*running, u, T(20));
  u.phase = JobPhase::kPending;
  auto pending = NextJobStatus(*restarting, u, T(30));
  REQUIRE(pending);
  CHECK(Phases(*pending) == std::vector<std::string>{"Running", "Restarting", "Pending"});
  CHECK(pending->conditions.back().last_transition_time == T(30));
}

TEST_CASE("JobStatus: counters change the status but not the transition time",
          "[controllers][job][status]") {
  api::JobStatus old;
  old.state.phase = "Running";
  old.state.last_transition_time = T(5);
  old.conditions = {{"Running", T(5)}};
  old.running = 1;
  StatusUpdate u;
  u.phase = JobPhase::kRunning;
  u.counts.running = 1;
  CHECK_FALSE(NextJobStatus(old, u, T(50)));  // nothing changed: no write

  u.counts.running = 2;
  u.counts.task_status_count["w"]["Running"] = 2;
  u.counts.version = 1;
  u.counts.retry_count = 1;
  u.controlled_resources = {{"plugin-svc", "svc"}};
  auto s = NextJobStatus(old, u, T(50));
  REQUIRE(s);
  CHECK(s->running == 2);
  CHECK(s->version == 1);
  CHECK(s->retry_count == 1);
  CHECK(s->task_status_count.at("w").at("Running") == 2);
  CHECK(s->controlled_resources.at("plugin-svc") == "svc");
  CHECK(s->state.last_transition_time == T(5));
  CHECK(s->state.reason.empty());
  CHECK(s->conditions.size() == 1);
}

TEST_CASE("JobStatus: a problem sets state reason and message without moving the phase",
          "[controllers][job][status]") {
  api::JobStatus old;
  old.state.phase = "Pending";
  old.state.last_transition_time = T(5);
  old.conditions = {{"Pending", T(5)}};
  StatusUpdate u;
  u.phase = JobPhase::kPending;
  u.reason = "QueueNotFound";
  u.message = "queue \"q1\" does not exist";
  auto s = NextJobStatus(old, u, T(50));
  REQUIRE(s);
  CHECK(s->state.reason == "QueueNotFound");
  CHECK(s->state.message == "queue \"q1\" does not exist");
  CHECK(s->state.last_transition_time == T(5));
  CHECK(s->conditions.size() == 1);
  CHECK_FALSE(NextJobStatus(*s, u, T(60)));  // the same problem again: no write

  // Solved: the next visit clears both.
  StatusUpdate ok;
  ok.phase = JobPhase::kPending;
  auto cleared = NextJobStatus(*s, ok, T(70));
  REQUIRE(cleared);
  CHECK(cleared->state.reason.empty());
  CHECK(cleared->state.message.empty());
}

TEST_CASE("JobStatus: standard conditions follow the phase (kubectl wait --for=condition=X)",
          "[controllers][job][status]") {
  api::JobStatus old;
  StatusUpdate u;
  u.phase = JobPhase::kPending;
  auto pending = NextJobStatus(old, u, T(0));
  REQUIRE(pending);
  REQUIRE(pending->typed_conditions.size() == 1);
  const api::Condition* c = pending->FindTypedCondition("Pending");
  REQUIRE(c != nullptr);
  CHECK(c->status == "True");
  CHECK(c->reason == "Pending");
  CHECK(c->message == "The job is Pending.");
  CHECK(c->last_transition_time == T(0));

  u.phase = JobPhase::kRunning;
  auto running = NextJobStatus(*pending, u, T(10));
  REQUIRE(running);
  CHECK(running->FindTypedCondition("Pending")->status == "False");
  CHECK(running->FindTypedCondition("Pending")->reason == "Running");
  CHECK(running->FindTypedCondition("Pending")->message == "The job left Pending for Running.");
  CHECK(running->FindTypedCondition("Pending")->last_transition_time == T(10));
  CHECK(running->FindTypedCondition("Running")->status == "True");

  // A reason within the phase: the True condition says it, without a transition.
  u.reason = "PodGroupPending";
  u.message = "1/2 tasks in gang unschedulable";
  auto stuck = NextJobStatus(*running, u, T(15));
  REQUIRE(stuck);
  CHECK(stuck->FindTypedCondition("Running")->reason == "PodGroupPending");
  CHECK(stuck->FindTypedCondition("Running")->message == "1/2 tasks in gang unschedulable");
  CHECK(stuck->FindTypedCondition("Running")->last_transition_time == T(10));
  CHECK_FALSE(NextJobStatus(*stuck, u, T(16)));

  u.reason.clear();
  u.message.clear();
  u.phase = JobPhase::kCompleted;
  auto done = NextJobStatus(*stuck, u, T(20));
  REQUIRE(done);
  CHECK(done->typed_conditions.size() == 3);
  CHECK(done->FindTypedCondition("Completed")->status == "True");
  CHECK(done->FindTypedCondition("Completed")->last_transition_time == T(20));
  CHECK(done->FindTypedCondition("Running")->status == "False");
  // Pending was already False: untouched.
  CHECK(done->FindTypedCondition("Pending")->last_transition_time == T(10));
  // Exactly one condition is True.
  int trues = 0;
  for (const api::Condition& x : done->typed_conditions) trues += x.status == "True";
  CHECK(trues == 1);
  // The phase history is still Volcano's.
  CHECK(Phases(*done) == std::vector<std::string>{"Pending", "Running", "Completed"});
}

TEST_CASE("JobStatus: a job without standard conditions gets none until its phase changes",
          "[controllers][job][status]") {
  api::JobStatus old;
  old.state.phase = "Running";
  old.state.last_transition_time = T(5);
  old.conditions = {{"Running", T(5)}};
  StatusUpdate u;
  u.phase = JobPhase::kRunning;
  CHECK_FALSE(NextJobStatus(old, u, T(50)));  // no extra write for an upgraded controller
  u.phase = JobPhase::kCompleted;
  auto s = NextJobStatus(old, u, T(60));
  REQUIRE(s);
  REQUIRE(s->typed_conditions.size() == 1);
  CHECK(s->typed_conditions[0].type == "Completed");
  CHECK(s->typed_conditions[0].status == "True");
}

TEST_CASE("JobStatus: kill paths record the running duration", "[controllers][job][status]") {
  api::JobStatus old;
  old.state.phase = "Running";
  StatusUpdate u;
  u.phase = JobPhase::kCompleting;
  u.creation_timestamp = T(0);
  auto s = NextJobStatus(old, u, T(3723));
  REQUIRE(s);
  CHECK(s->running_duration == "1h2m3s");
}

TEST_CASE("JobStatus: api views convert to the controller's view", "[controllers][job][status]") {
  auto job = api::Job::Parse(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"ns","uid":"u"},
    "spec":{"minAvailable":1,"tasks":[{"name":"t","replicas":1,"template":{"spec":{}}}]},
    "status":{"state":{"phase":"Running"},"running":1,"version":3,"retryCount":1,
              "taskStatusCount":{"t":{"phase":{"Running":1}}}}})");
  REQUIRE(job.ok());
  CHECK(job->name() == "j");
  CHECK(job->phase() == JobPhase::kRunning);
  JobCounts c = CountsFromApi(job->status());
  CHECK(c.running == 1);
  CHECK(c.retry_count == 1);
  CHECK(c.version == 3);
  CHECK(c.task_status_count.at("t").at("Running") == 1);
}

}  // namespace
}  // namespace basalt::controllers
