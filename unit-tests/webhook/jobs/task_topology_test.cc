// The Job webhook's check of the task-topology annotations: a Job whose annotations name its
// tasks is admitted; an unknown task, a repeated one or a contradiction is refused with the
// annotation's path and the broken rule.
#include "webhook/jobs/task_topology.h"

#include <catch2/catch.hpp>
#include <string>

#include "fmt/format.h"
#include "unit-tests/webhook/testing/builders.h"
#include "webhook/fake_lister.h"
#include "webhook/jobs/validate_job.h"

namespace basalt::webhook {
namespace {

using testing::Run;

// A TensorFlow-style Job with tasks ps (1) and worker (2) and the given annotations (a JSON
// object body).
std::string TfJob(std::string_view annotations) {
  constexpr std::string_view kTask = R"({{"name": "{}", "replicas": {}, "template": {{"spec": {{
      "containers": [{{"name": "c", "image": "busybox",
                       "resources": {{"requests": {{"cpu": "1"}}}}}}]}}}}}})";
  return fmt::format(R"({{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {{"name": "tf", "namespace": "default", "annotations": {{{}}}}},
    "spec": {{"minAvailable": 3, "queue": "default", "tasks": [{}, {}]}}}})",
                     annotations, fmt::format(kTask, "ps", 1), fmt::format(kTask, "worker", 2));
}

AdmissionResponse Create(std::string_view annotations) {
  FakeLister lister;
  lister.AddQueue("default", "Open");
  JobValidator validator(lister);
  return Run(validator, Operation::kCreate, TfJob(annotations));
}

TEST_CASE("Job webhook: valid task-topology annotations are admitted", "[webhook][task_topology]") {
  AdmissionResponse r = Create(R"("volcano.sh/task-topology-affinity": "ps,worker",
                "volcano.sh/task-topology-anti-affinity": "worker",
                "volcano.sh/task-topology-task-order": "ps,worker")");
  CHECK(r.allowed);
  CHECK(r.message == "");
  CHECK(Create("").allowed);
}

TEST_CASE("Job webhook: a task-topology annotation naming no task of the Job is refused",
          "[webhook][task_topology]") {
  AdmissionResponse r = Create(R"("volcano.sh/task-topology-affinity": "ps,wroker")");
  CHECK_FALSE(r.allowed);
  CHECK(r.code == 422);
  CHECK(r.message ==
        "metadata.annotations[volcano.sh/task-topology-affinity]: task \"wroker\" is not a task "
        "of the job (its tasks: ps, worker)");
}

TEST_CASE("Job webhook: repeated and contradictory task-topology entries are refused",
          "[webhook][task_topology]") {
  AdmissionResponse r = Create(R"("volcano.sh/task-topology-task-order": "ps,worker,ps",
                                  "volcano.sh/task-topology-affinity": "ps,worker",
                                  "volcano.sh/task-topology-anti-affinity": "worker,ps")");
  CHECK_FALSE(r.allowed);
  CHECK(r.message ==
        "metadata.annotations[volcano.sh/task-topology-task-order]: task \"ps\" appears twice in "
        "the order \"ps,worker,ps\"; "
        "metadata.annotations[volcano.sh/task-topology-anti-affinity]: tasks \"ps\" and \"worker\" "
        "share a group here and in volcano.sh/task-topology-affinity: they cannot both share a "
        "node and avoid each other");
}

}  // namespace
}  // namespace basalt::webhook
