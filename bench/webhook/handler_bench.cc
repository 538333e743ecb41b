// Handler time of the Job and PodGroup validators, without HTTP or TLS: the same objects
// validated many times against an in-memory lister. Prints nanoseconds per call; compare runs
// of two builds on the same machine, not absolute figures.
//
//   webhook_handler_bench [iterations]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/util/json.h"
#include "webhook/fake_lister.h"
#include "webhook/jobs/validate_job.h"
#include "webhook/podgroups/validate_podgroup.h"

namespace {

using basalt::webhook::FakeLister;

constexpr const char* kPodGroup = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
  "metadata": {"name": "pg", "namespace": "default"},
  "spec": {"queue": "team-a", "minMember": 8,
           "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
           "subGroupPolicy": [
             {"name": "a", "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
             {"name": "b", "networkTopology": {"mode": "soft"}},
             {"name": "c", "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
             {"name": "d"}]}})";

std::string JobText() {
  std::string tasks;
  for (int i = 0; i < 4; ++i) {
    if (i > 0) tasks += ",";
    tasks += R"({"name": "t)" + std::to_string(i) + R"(", "replicas": 2, "minAvailable": 1,
      "template": {"metadata": {"labels": {"role": "worker"}},
        "spec": {"containers": [{"name": "c", "image": "busybox",
          "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}})";
  }
  return R"({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {"name": "job", "namespace": "default"},
    "spec": {"queue": "team-a", "minAvailable": 4, "schedulerName": "volcano",
             "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
             "tasks": [)" +
         tasks + "]}}";
}

template <typename F>
double NanosPerCall(long iterations, F&& f) {
  auto start = std::chrono::steady_clock::now();
  size_t sink = 0;
  for (long i = 0; i < iterations; ++i) sink += f();
  auto end = std::chrono::steady_clock::now();
  if (sink == static_cast<size_t>(-1)) std::puts("");
  return std::chrono::duration<double, std::nano>(end - start).count() /
         static_cast<double>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = argc > 1 ? std::atol(argv[1]) : 100000;
  FakeLister lister;
  lister.AddQueue("default", "Open");
  lister.AddQueue("team-a", "Open");
  auto podgroup = basalt::json::Parse(kPodGroup);
  auto job = basalt::json::Parse(JobText());
  if (!podgroup.ok() || !job.ok()) {
    std::fprintf(stderr, "bad bench object\n");
    return 1;
  }
  double pg = NanosPerCall(iterations, [&] {
    return basalt::webhook::ValidatePodGroupCreate(*podgroup, lister).size();
  });
  double jb = NanosPerCall(iterations,
                           [&] { return basalt::webhook::ValidateJobCreate(*job, lister).size(); });
  std::printf("podgroup_create_ns=%.0f job_create_ns=%.0f iterations=%ld\n", pg, jb, iterations);
  return 0;
}
