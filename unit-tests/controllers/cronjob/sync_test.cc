#include "controllers/cronjob/sync.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "common/api/time.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

api::Time At(std::string_view rfc3339) {
  absl::StatusOr<api::Time> t = api::ParseRfc3339(rfc3339);
  REQUIRE(t.ok());
  return *t;
}

// A CronJob "nightly" in ns "team", created at 10:00:30.
api::CronJob Cron(std::string_view spec_extra = "", std::string_view status = "{}") {
  auto cj = api::CronJob::Parse(fmt::format(
      R"({{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"CronJob",
      "metadata":{{"name":"nightly","namespace":"team","uid":"cj-uid",
                   "creationTimestamp":"2026-01-01T10:00:30Z"}},
      "spec":{{"schedule":"*/1 * * * *"{},
               "jobTemplate":{{"metadata":{{"labels":{{"team":"ml"}},"annotations":{{"a":"b"}}}},
                              "spec":{{"minAvailable":1,"tasks":[{{"name":"t","replicas":1,
                                      "template":{{"spec":{{"containers":[]}}}}}}]}}}}}},
      "status":{}}})",
      spec_extra, status));
  INFO(MessageOf(cj.status()));
  REQUIRE(cj.ok());
  return *cj;
}

absl::StatusOr<CronSchedule> Sched(const api::CronJob& cj) {
  return CronSchedule::Parse(cj.spec().schedule, std::string("UTC"));
}

OwnedJob Job(std::string name, std::string uid, std::string phase, std::string_view created,
             std::string_view finished = "") {
  OwnedJob j{std::move(name), std::move(uid), std::move(phase), At(created), std::nullopt};
  if (!finished.empty()) j.last_transition_time = At(finished);
  return j;
}

std::string ActiveStatus(std::string_view name, std::string_view uid,
                         std::string_view last = "2026-01-01T10:01:00Z") {
  return fmt::format(
      R"({{"active":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","namespace":"team",
      "name":"{}","uid":"{}"}}],"lastScheduleTime":"{}"}})",
      name, uid, last);
}

bool HasEvent(const CronPlan& p, std::string_view reason) {
  for (const CronEvent& e : p.events) {
    if (e.reason == reason) return true;
  }
  return false;
}

TEST_CASE("PlanCronJob: the first start time after creation, then a requeue for the next",
          "[controllers][cronjob]") {
  const api::CronJob cj = Cron();
  CronPlan early = PlanCronJob(cj, {}, Sched(cj), At("2026-01-01T10:00:40Z"));
  CHECK_FALSE(early.start);
  REQUIRE(early.requeue_after);
  CHECK(*early.requeue_after == seconds(20) + milliseconds(100));

  CronPlan due = PlanCronJob(cj, {}, Sched(cj), At("2026-01-01T10:01:05Z"));
  REQUIRE(due.start);
  CHECK(api::FormatRfc3339(*due.start) == "2026-01-01T10:01:00Z");
  CHECK(*due.requeue_after == seconds(55) + milliseconds(100));
  CHECK(CronJobJobName("nightly", *due.start) == fmt::format("nightly-{}", 1767261660 / 60));
  // Off the minute: seconds, so that two starts of one minute differ.
  CHECK(CronJobJobName("fast", *due.start + std::chrono::seconds(15)) ==
        fmt::format("fast-{}s", 1767261660 + 15));
  CHECK(due.events.empty());
}

TEST_CASE("PlanCronJob: a start time already met is not started again", "[controllers][cronjob]") {
  const api::CronJob cj = Cron("", R"({"lastScheduleTime":"2026-01-01T10:01:00Z"})");
  CronPlan p = PlanCronJob(cj, {}, Sched(cj), At("2026-01-01T10:01:30Z"));
  CHECK_FALSE(p.start);
  CronPlan next = PlanCronJob(cj, {}, Sched(cj), At("2026-01-01T10:02:01Z"));
  REQUIRE(next.start);
  CHECK(api::FormatRfc3339(*next.start) == "2026-01-01T10:02:00Z");
}

TEST_CASE("PlanCronJob: concurrency policies with an active Job", "[controllers][cronjob]") {
  const std::vector<OwnedJob> running = {
      Job("nightly-29454361", "j1", "Running", "2026-01-01T10:01:00Z")};
  const api::Time now = At("2026-01-01T10:02:02Z");

  const api::CronJob forbid =
      Cron(R"(,"concurrencyPolicy":"Forbid")", ActiveStatus("nightly-29454361", "j1"));
  CronPlan f = PlanCronJob(forbid, running, Sched(forbid), now);
  CHECK_FALSE(f.start);
  CHECK(HasEvent(f, "JobAlreadyActive"));
  CHECK(f.status.active.size() == 1);
  CHECK(f.requeue_after);
  // Once the active Job finished, the skipped start time runs late (no deadline set).
  const std::vector<OwnedJob> done = {
      Job("nightly-29454361", "j1", "Completed", "2026-01-01T10:01:00Z", "2026-01-01T10:02:30Z")};
  CronPlan late = PlanCronJob(forbid, done, Sched(forbid), At("2026-01-01T10:02:40Z"));
  REQUIRE(late.start);
  CHECK(api::FormatRfc3339(*late.start) == "2026-01-01T10:02:00Z");
  CHECK(late.status.active.empty());
  CHECK(HasEvent(late, "SawCompletedJob"));
  CHECK(late.status.last_successful_time == At("2026-01-01T10:02:30Z"));

  const api::CronJob allow = Cron("", ActiveStatus("nightly-29454361", "j1"));
  CronPlan a = PlanCronJob(allow, running, Sched(allow), now);
  REQUIRE(a.start);
  CHECK(a.replace_jobs.empty());

  const api::CronJob replace =
      Cron(R"(,"concurrencyPolicy":"Replace")", ActiveStatus("nightly-29454361", "j1"));
  CronPlan r = PlanCronJob(replace, running, Sched(replace), now);
  REQUIRE(r.start);
  REQUIRE(r.replace_jobs.size() == 1);
  CHECK(r.replace_jobs[0].uid == "j1");
}

TEST_CASE("PlanCronJob: history limits delete the oldest finished Jobs", "[controllers][cronjob]") {
  const api::CronJob cj = Cron(R"(,"successfulJobsHistoryLimit":2,"failedJobsHistoryLimit":1)",
                               R"({"lastScheduleTime":"2026-01-01T10:10:00Z"})");
  const std::vector<OwnedJob> jobs = {
      Job("c3", "u3", "Completed", "2026-01-01T10:03:00Z", "2026-01-01T10:03:30Z"),
      Job("c1", "u1", "Completed", "2026-01-01T10:01:00Z", "2026-01-01T10:01:30Z"),
      Job("c2", "u2", "Completed", "2026-01-01T10:02:00Z", "2026-01-01T10:02:30Z"),
      Job("f1", "u4", "Failed", "2026-01-01T10:04:00Z"),
      Job("t1", "u5", "Terminated", "2026-01-01T10:05:00Z"),
      Job("a1", "u6", "Aborted", "2026-01-01T10:00:00Z"),  // not finished: kept
  };
  CronPlan p = PlanCronJob(cj, jobs, Sched(cj), At("2026-01-01T10:10:30Z"));
  std::vector<std::string> deleted;
  for (const OwnedJob& j : p.delete_jobs) deleted.push_back(j.name);
  CHECK(deleted == std::vector<std::string>{"c1", "f1"});
  CHECK(p.status.last_successful_time == At("2026-01-01T10:03:30Z"));
  // The unfinished (Aborted) Job missing from status.active is added back.
  REQUIRE(p.status.active.size() == 1);
  CHECK(p.status.active[0].uid == "u6");
  CHECK(p.status.active[0].name == "a1");
  CHECK(p.status.active[0].kind == "Job");
}

TEST_CASE("PlanCronJob: a limit of 0 keeps no finished Job, gone Jobs leave status.active",
          "[controllers][cronjob]") {
  const api::CronJob cj = Cron(R"(,"successfulJobsHistoryLimit":0)",
                               ActiveStatus("gone", "gone-uid", "2026-01-01T10:10:00Z"));
  CronPlan p = PlanCronJob(
      cj, {Job("c1", "u1", "Completed", "2026-01-01T10:01:00Z", "2026-01-01T10:01:30Z")}, Sched(cj),
      At("2026-01-01T10:10:30Z"));
  REQUIRE(p.delete_jobs.size() == 1);
  CHECK(p.status.active.empty());
}

TEST_CASE("PlanCronJob: suspend keeps the bookkeeping and starts nothing",
          "[controllers][cronjob]") {
  const api::CronJob cj = Cron(R"(,"suspend":true)", ActiveStatus("nightly-1", "j1"));
  CronPlan p = PlanCronJob(
      cj, {Job("nightly-1", "j1", "Failed", "2026-01-01T10:01:00Z", "2026-01-01T10:01:30Z")},
      Sched(cj), At("2026-01-01T11:00:00Z"));
  CHECK_FALSE(p.start);
  CHECK_FALSE(p.requeue_after);
  CHECK(p.status.active.empty());
}

TEST_CASE("PlanCronJob: startingDeadlineSeconds bounds how late a start may be",
          "[controllers][cronjob]") {
  const std::string last = R"({"lastScheduleTime":"2026-01-01T10:00:00Z"})";
  const api::CronJob within = Cron(R"(,"startingDeadlineSeconds":60)", last);
  CronPlan p = PlanCronJob(within, {}, Sched(within), At("2026-01-01T10:05:30Z"));
  REQUIRE(p.start);
  CHECK(api::FormatRfc3339(*p.start) == "2026-01-01T10:05:00Z");
  CHECK_FALSE(HasEvent(p, "TooManyMissedTimes"));

  const api::CronJob missed = Cron(R"(,"startingDeadlineSeconds":10)", last);
  CronPlan m = PlanCronJob(missed, {}, Sched(missed), At("2026-01-01T10:05:30Z"));
  CHECK_FALSE(m.start);
  REQUIRE(m.requeue_after);
  CHECK(*m.requeue_after == seconds(30) + milliseconds(100));
}

TEST_CASE("PlanCronJob: many missed start times start only the most recent",
          "[controllers][cronjob]") {
  const api::CronJob cj = Cron();  // created 2026-01-01T10:00:30Z, never scheduled
  CronPlan p = PlanCronJob(cj, {}, Sched(cj), At("2026-03-01T12:34:56Z"));
  REQUIRE(p.start);
  CHECK(api::FormatRfc3339(*p.start) == "2026-03-01T12:34:00Z");
  CHECK(HasEvent(p, "TooManyMissedTimes"));
}

TEST_CASE("PlanCronJob: a bad schedule is a Warning, not a Job", "[controllers][cronjob]") {
  const api::CronJob cj = Cron();
  CronPlan p = PlanCronJob(cj, {}, CronSchedule::Parse("61 * * * *", std::string("UTC")),
                           At("2026-01-01T10:05:00Z"));
  CHECK_FALSE(p.start);
  CHECK(HasEvent(p, "UnparseableSchedule"));
}

TEST_CASE("BuildCronJobJob: the template's metadata and spec, owned by the CronJob",
          "[controllers][cronjob]") {
  const api::CronJob cj = Cron();
  const CronSchedule s = *CronSchedule::Parse("*/1 * * * *", std::string("Europe/Paris"));
  api::Object job = BuildCronJobJob(cj, s, At("2026-01-01T10:01:00Z"));
  CHECK(job.kind() == "Job");
  CHECK(job.api_version() == "batch.volcano.sh/v1alpha1");
  CHECK(job.name() == "nightly-29454361");
  CHECK(job.namespace_name() == "team");
  CHECK(job.label("team") == "ml");
  CHECK(job.annotation("a") == "b");
  CHECK(job.annotation("batch.volcano.sh/cronjob-scheduled-timestamp") ==
        "2026-01-01T11:01:00+01:00");
  std::optional<api::OwnerReference> owner = job.controller_ref();
  REQUIRE(owner);
  CHECK(owner->kind == "CronJob");
  CHECK(owner->name == "nightly");
  CHECK(owner->uid == "cj-uid");
  CHECK(owner->block_owner_deletion);
  const json::Value* min = json::FindPath(job.doc(), {"spec", "minAvailable"});
  REQUIRE(min != nullptr);
  CHECK(min->GetInt() == 1);
}

TEST_CASE("JobFinished: Completed, Failed and Terminated", "[controllers][cronjob]") {
  CHECK(JobFinished("Completed"));
  CHECK(JobFinished("Failed"));
  CHECK(JobFinished("Terminated"));
  CHECK_FALSE(JobFinished("Aborted"));
  CHECK_FALSE(JobFinished("Running"));
  CHECK_FALSE(JobFinished(""));
}

}  // namespace
}  // namespace basalt::controllers
