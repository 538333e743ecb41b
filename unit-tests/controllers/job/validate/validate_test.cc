// ValidateJobSpec: the spec problems the job controller refuses to act on, each naming its field.

#include "controllers/job/validate/validate.h"

#include <catch2/catch.hpp>

#include "common/util/json.h"

namespace basalt::controllers {
namespace {

api::JobSpec Spec(std::string_view json) {
  absl::StatusOr<api::Job> job = api::Job::Parse(json);
  REQUIRE(job.ok());
  return job->spec();
}

constexpr char kContainers[] = R"({"spec":{"containers":[{"name":"c","image":"busybox"}]}})";

std::string Job(std::string_view spec_members) {
  return std::string(R"({"metadata":{"name":"j"},"spec":{)") + std::string(spec_members) + "}}";
}

std::string Task(std::string_view name, int replicas, std::string_view extra = "") {
  return std::string(R"({"name":")") + std::string(name) + R"(","replicas":)" +
         std::to_string(replicas) + std::string(extra) + R"(,"template":)" + kContainers + "}";
}

TEST_CASE("ValidateJobSpec: a well-formed job has no problems", "[controllers][job][validate]") {
  CHECK(ValidateJobSpec(Spec(Job(R"("minAvailable":3,"tasks":[)" + Task("master", 1) + "," +
                                 Task("worker", 2, R"(,"dependsOn":{"name":["master"]})") + "]")))
            .empty());
}

TEST_CASE("ValidateJobSpec: no tasks", "[controllers][job][validate]") {
  CHECK(ValidateJobSpec(Spec(Job(R"("tasks":[])"))) ==
        std::vector<std::string>{"spec.tasks: no task specified in the job spec"});
  CHECK(ValidateJobSpec(Spec(Job(R"("queue":"default")"))).size() == 1);
}

TEST_CASE("ValidateJobSpec: counts", "[controllers][job][validate]") {
  const auto problems = ValidateJobSpec(Spec(
      Job(R"("minAvailable":4,"maxRetry":-1,"tasks":[)" + Task("a", 2, R"(,"minAvailable":3)") +
          "," + Task("b", -2) + "," + Task("c", 1, R"(,"minAvailable":-1)") + "]")));
  CHECK(problems == std::vector<std::string>{
                        "spec.maxRetry: must not be negative, got -1",
                        "spec.tasks[0].minAvailable: 3 is greater than replicas 2",
                        "spec.tasks[1].replicas: must not be negative, got -2",
                        "spec.tasks[2].minAvailable: must not be negative, got -1",
                        "spec.minAvailable: 4 is greater than the total replicas 3 of the tasks",
                    });
}

TEST_CASE("ValidateJobSize: more pods than --max-job-pods, summed over the tasks, is a problem",
          "[controllers][job][validate]") {
  const api::JobSpec huge = Spec(Job(R"("minAvailable":1,"tasks":[)" + Task("a", 2147483647) + "," +
                                     Task("b", 2147483647) + "," + Task("c", -5) + "]"));
  const auto problems = ValidateJobSize(huge, kDefaultMaxJobPods);
  REQUIRE(problems.size() == 1);
  // Summed in 64 bits: two int32-max tasks do not wrap; negative replicas count as none.
  CHECK(problems[0] ==
        "spec.tasks: 4294967294 pods in total is more than the job controller creates for one "
        "job (--max-job-pods=100000); no pod is created: lower the tasks' replicas, or raise "
        "--max-job-pods of vc-controller-manager (and of the webhook)");
  const api::JobSpec at_limit =
      Spec(Job(R"("tasks":[)" + Task("a", 60000) + "," + Task("b", 40000) + "]"));
  CHECK(ValidateJobSize(at_limit, 100000).empty());
  CHECK(ValidateJobSize(at_limit, 99999).size() == 1);
}

TEST_CASE("ValidateJobSpec: duplicate task names", "[controllers][job][validate]") {
  CHECK(ValidateJobSpec(Spec(Job(R"("tasks":[)" + Task("w", 1) + "," + Task("w", 1) + "]"))) ==
        std::vector<std::string>{R"(spec.tasks[1].name: duplicated task name "w")"});
}

TEST_CASE("ValidateJobSpec: templates without containers or with bad quantities",
          "[controllers][job][validate]") {
  const auto problems = ValidateJobSpec(Spec(Job(
      R"("tasks":[{"name":"a","replicas":1},{"name":"b","replicas":1,"template":{"spec":{"containers":[]}}},)"
      R"({"name":"c","replicas":1,"template":{"spec":{"containers":[{"name":"x","resources":{"limits":{"memory":"lots"}}}]}}}])")));
  REQUIRE(problems.size() == 3);
  CHECK(problems[0] ==
        "spec.tasks[0].template.spec.containers: at least one container is required");
  CHECK(problems[1] ==
        "spec.tasks[1].template.spec.containers: at least one container is required");
  CHECK_THAT(problems[2],
             Catch::StartsWith("spec.tasks[2].template.spec.containers[0].resources.limits: "));
  CHECK_THAT(problems[2], Catch::Contains("lots"));
}

TEST_CASE("ValidateJobSpec: dependsOn on unknown tasks, itself, or in a cycle",
          "[controllers][job][validate]") {
  CHECK(ValidateJobSpec(
            Spec(Job(R"("tasks":[)" + Task("a", 1, R"(,"dependsOn":{"name":["ghost"]})") + "]"))) ==
        std::vector<std::string>{R"(spec.tasks[0].dependsOn.name: task "ghost" does not exist)"});
  CHECK(ValidateJobSpec(
            Spec(Job(R"("tasks":[)" + Task("a", 1, R"(,"dependsOn":{"name":["a"]})") + "]"))) ==
        std::vector<std::string>{R"(spec.tasks[0].dependsOn.name: task "a" depends on itself)"});
  CHECK(ValidateJobSpec(Spec(Job(R"("tasks":[)" + Task("a", 1, R"(,"dependsOn":{"name":["b"]})") +
                                 "," + Task("b", 1, R"(,"dependsOn":{"name":["a"]})") + "]"))) ==
        std::vector<std::string>{"spec.tasks: dependsOn forms a cycle (a -> b -> a)"});
}

TEST_CASE("ValidateJobSpec: volumes need a mount path and a claim",
          "[controllers][job][validate]") {
  const auto problems = ValidateJobSpec(Spec(Job(
      R"("volumes":[{"volumeClaimName":"x"},{"mountPath":"/d"},{"mountPath":"/d","volumeClaim":{}}],)"
      R"("tasks":[)" +
      Task("a", 1) + "]")));
  CHECK(problems == std::vector<std::string>{
                        "spec.volumes[0].mountPath: required",
                        "spec.volumes[1]: either volumeClaim or volumeClaimName must be specified",
                        R"(spec.volumes[2].mountPath: duplicated mount path "/d")",
                    });
  CHECK(JoinProblems({"a", "b"}) == "a; b");
}

}  // namespace
}  // namespace basalt::controllers
