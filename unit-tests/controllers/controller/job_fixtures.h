#pragma once
// The documents the job controller's unit tests start from: a Job "ns/train" of one task
// "worker", its PodGroup and its pods, as the informers would hold them.

#include <string>
#include <string_view>

#include "fmt/format.h"

namespace basalt::controllers::testing {

struct JobBuilder {
  std::string uid = "job-uid-1";
  int replicas = 2;
  std::string policies = "[]";
  std::string status = "{}";
  std::string rv = "10";

  std::string Json() const {
    return fmt::format(
        R"({{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{{"name":"train","namespace":"ns","uid":"{}","resourceVersion":"{}","generation":1,"creationTimestamp":"2026-01-01T00:00:00Z"}},)"
        R"("spec":{{"minAvailable":{},"schedulerName":"volcano","queue":"default","maxRetry":3,"policies":{},)"
        R"("tasks":[{{"name":"worker","replicas":{},"template":{{"spec":{{"containers":[{{"name":"main","image":"busybox"}}]}}}}}}]}},"status":{}}})",
        uid, rv, replicas, policies, replicas, status);
  }
};

inline std::string PodGroupJson(std::string_view phase, std::string_view owner_uid = "job-uid-1",
                                std::string_view uid = "pg-uid-1") {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{{"name":"train","namespace":"ns","uid":"{}","resourceVersion":"5",)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train","uid":"{}","controller":true}}]}},)"
      R"("spec":{{"minMember":2,"queue":"default"}},"status":{{"phase":"{}"}}}})",
      uid, owner_uid, phase);
}

inline std::string PodJson(int index, std::string_view phase, int version = 0) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"train-worker-{0}","namespace":"ns","uid":"pod-uid-{0}","resourceVersion":"7",)"
      R"("annotations":{{"volcano.sh/job-name":"train","volcano.sh/task-spec":"worker","volcano.sh/job-version":"{2}"}},)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train","uid":"job-uid-1","controller":true}}]}},)"
      R"("spec":{{"schedulerName":"volcano"}},"status":{{"phase":"{1}"}}}})",
      index, phase, version);
}

}  // namespace basalt::controllers::testing
