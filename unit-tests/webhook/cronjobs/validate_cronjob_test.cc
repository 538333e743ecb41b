#include "webhook/cronjobs/validate_cronjob.h"

#include <catch2/catch.hpp>
#include <string>

#include "fmt/format.h"
#include "webhook/fake_lister.h"

namespace basalt::webhook {
namespace {

// A CronJob document with `spec_fields` spliced before jobTemplate, and a Job template whose
// task is `task` (JSON).
std::string Cron(
    std::string_view spec_fields,
    std::string_view task =
        R"({"name":"t","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}})",
    std::string_view name = "nightly") {
  return fmt::format(
      R"({{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"CronJob",
      "metadata":{{"name":"{}","namespace":"team"}},
      "spec":{{{}"jobTemplate":{{"spec":{{"tasks":[{}]}}}}}}}})",
      name, spec_fields, task);
}

std::string Message(std::string_view doc) {
  FakeLister lister;
  lister.AddQueue("default", "Open");
  absl::StatusOr<json::Document> d = json::Parse(doc);
  REQUIRE(d.ok());
  return ValidateCronJob(*d, lister, "volcano").Message();
}

TEST_CASE("ValidateCronJob: a valid CronJob is admitted", "[webhook][cronjob]") {
  CHECK(Message(Cron(R"("schedule":"*/1 * * * *",)")) == "");
  CHECK(Message(Cron(R"("schedule":"@hourly","timeZone":"Europe/Paris",
                        "concurrencyPolicy":"Forbid","startingDeadlineSeconds":30,
                        "successfulJobsHistoryLimit":0,"failedJobsHistoryLimit":2,)")) == "");
}

TEST_CASE("ValidateCronJob: schedule, time zone and policy errors name the field",
          "[webhook][cronjob]") {
  CHECK(Message(Cron("")) == "spec.schedule: Required value");
  CHECK(Message(Cron(R"("schedule":"61 * * * *",)")) ==
        "spec.schedule: Invalid value: \"61 * * * *\": minute field: 61 is out of range 0-59");
  CHECK(Message(Cron(R"("schedule":"* * *",)")).find("spec.schedule: Invalid value") == 0);
  CHECK(Message(Cron(R"("schedule":"0 0 30 2 *",)")) ==
        "spec.schedule: Invalid value: \"0 0 30 2 *\": never fires in the next 5 years");
  CHECK(Message(Cron(R"("schedule":"* * * * *","timeZone":"Mars/Olympus",)"))
            .find("spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone") == 0);
  CHECK(Message(Cron(R"("schedule":"* * * * *","concurrencyPolicy":"Sometimes",)")) ==
        "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", "
        "\"Forbid\", \"Replace\"");
  CHECK(Message(Cron(R"("schedule":"* * * * *","startingDeadlineSeconds":-1,)")) ==
        "spec.startingDeadlineSeconds: must be greater than or equal to 0");
  CHECK(Message(Cron(R"("schedule":"* * * * *","failedJobsHistoryLimit":-2,)")) ==
        "spec.failedJobsHistoryLimit: must be greater than or equal to 0");
  // Members of the wrong type: a policy reads as "", a count as invalid, null as absent.
  CHECK(Message(Cron(R"("schedule":"* * * * *","concurrencyPolicy":5,)")) ==
        "spec.concurrencyPolicy: Unsupported value: \"\": supported values: \"Allow\", "
        "\"Forbid\", \"Replace\"");
  CHECK(Message(Cron(R"("schedule":"* * * * *","startingDeadlineSeconds":"60",)")) ==
        "spec.startingDeadlineSeconds: must be greater than or equal to 0");
  CHECK(Message(Cron(R"("schedule":"* * * * *","startingDeadlineSeconds":null,)")) == "");
  CHECK(Message(Cron(R"("schedule":"* * * * *","timeZone":5,)")) ==
        Message(Cron(R"("schedule":"* * * * *","timeZone":"",)")));
}

TEST_CASE("ValidateCronJob: the name leaves room for the Jobs' suffix", "[webhook][cronjob]") {
  const std::string long_name(53, 'a');
  CHECK(
      Message(
          Cron(
              R"("schedule":"* * * * *",)",
              R"({"name":"t","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}})",
              long_name))
          .find("metadata.name: must be no more than 52 characters") == 0);
}

TEST_CASE("ValidateCronJob: the Job template passes the Job webhook's rules",
          "[webhook][cronjob]") {
  // minAvailable above replicas: refused under spec.jobTemplate.spec.
  const std::string m = Message(Cron(
      R"("schedule":"* * * * *",)",
      R"({"name":"t","replicas":1,"minAvailable":2,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}})"));
  INFO(m);
  CHECK(m.find("spec.jobTemplate.spec.tasks[0].minAvailable") != std::string::npos);
  // An unknown queue.
  FakeLister lister;
  lister.AddQueue("default", "Open");
  auto d =
      json::Parse(R"({"metadata":{"name":"n","namespace":"team"},"spec":{"schedule":"* * * * *",
      "jobTemplate":{"spec":{"queue":"nope","tasks":[{"name":"t","replicas":1,
      "template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}]}}}})");
  REQUIRE(d.ok());
  CHECK(ValidateCronJob(*d, lister, "volcano").Message().find("spec.jobTemplate.spec.queue") !=
        std::string::npos);
  auto no_template = json::Parse(R"({"metadata":{"name":"n"},"spec":{"schedule":"* * * * *"}})");
  REQUIRE(no_template.ok());
  CHECK(ValidateCronJob(*no_template, lister, "volcano").Message() ==
        "spec.jobTemplate: Required value");
}

}  // namespace
}  // namespace basalt::webhook
