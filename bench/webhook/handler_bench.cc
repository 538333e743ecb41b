// Handler time of the Job, PodGroup and Queue validators, without HTTP or TLS: the same
// (valid) objects validated many times against an in-memory lister. Prints the thread's CPU
// nanoseconds per call (time spent descheduled on a shared machine does not count), the best
// of many short rounds (the least disturbed); compare runs of two builds on the same
// machine, not absolute figures (bench/webhook/ab.sh interleaves two builds and prints the
// ratios).
//
//   webhook_handler_bench [--iterations=2000] [--rounds=30]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "bench/common/flags.h"
#include "common/util/json.h"
#include "webhook/fake_lister.h"
#include "webhook/jobs/validate_job.h"
#include "webhook/podgroups/validate_podgroup.h"
#include "webhook/queues/validate_queue.h"

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

// A child queue of `eng` with quotas within its parent's, next to a sibling.
constexpr const char* kQueue = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
  "metadata": {"name": "eng-dev",
               "annotations": {"volcano.sh/hierarchy": "root/eng/dev",
                               "volcano.sh/hierarchy-weights": "1/2/3"}},
  "spec": {"parent": "eng", "weight": 2, "reclaimable": true,
           "capability": {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "4"},
           "deserved": {"cpu": "8", "memory": "32Gi"},
           "guarantee": {"resource": {"cpu": "2", "memory": "8Gi"}}},
  "status": {"state": "Open"}})";

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

double ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// The best of `rounds` rounds of `iterations` calls, in ns per call.
template <typename F>
double NanosPerCall(long iterations, int rounds, F&& f) {
  double best = 0;
  size_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    const double start = ThreadCpuNanos();
    for (long i = 0; i < iterations; ++i) sink += f();
    const double ns = (ThreadCpuNanos() - start) / static_cast<double>(iterations);
    best = r == 0 ? ns : std::min(best, ns);
  }
  if (sink == static_cast<size_t>(-1)) std::puts("");
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t iterations = 2000;
  int rounds = 30;
  basalt::FlagSet flags("webhook_handler_bench");
  flags.Int64("iterations", &iterations, "requests per round");
  flags.Int("rounds", &rounds, "rounds");
  basalt::bench::ParseFlagsOrExit(flags, argc, argv);
  if (iterations < 1 || rounds < 1) {
    std::fprintf(stderr, "--iterations and --rounds must be >= 1\n%s", flags.Usage().c_str());
    return 2;
  }
  FakeLister lister;
  lister.AddQueue("default", "Open");
  lister.AddQueue("team-a", "Open");
  basalt::webhook::QueueInfo eng{"eng",
                                 "Open",
                                 "",
                                 {{"cpu", "64"}, {"memory", "256Gi"}},
                                 {{"cpu", "32"}, {"memory", "128Gi"}},
                                 {{"cpu", "8"}, {"memory", "32Gi"}}};
  lister.AddQueue(eng);
  basalt::webhook::QueueInfo sibling{"eng-prod",      "Open",          "eng",
                                     {{"cpu", "32"}}, {{"cpu", "16"}}, {{"cpu", "4"}}};
  lister.AddQueue(sibling);
  auto podgroup = basalt::json::Parse(kPodGroup);
  auto job = basalt::json::Parse(JobText());
  auto queue = basalt::json::Parse(kQueue);
  if (!podgroup.ok() || !job.ok() || !queue.ok()) {
    std::fprintf(stderr, "bad bench object\n");
    return 1;
  }
  const basalt::webhook::AdmissionOptions options;
  // Every object is valid: a bench of the path users take most.
  size_t errors =
      basalt::webhook::ValidatePodGroupCreate(*podgroup, lister).size() +
      basalt::webhook::ValidateJobCreate(*job, lister).size() +
      basalt::webhook::ValidateQueueCreateOrUpdate(nullptr, *queue, lister, options).size();
  if (errors != 0) {
    std::fprintf(stderr, "a bench object is refused: %s %s %s\n",
                 basalt::webhook::ValidatePodGroupCreate(*podgroup, lister).Message().c_str(),
                 basalt::webhook::ValidateJobCreate(*job, lister).Message().c_str(),
                 basalt::webhook::ValidateQueueCreateOrUpdate(nullptr, *queue, lister, options)
                     .Message()
                     .c_str());
    return 1;
  }
  double pg = NanosPerCall(iterations, rounds, [&] {
    return basalt::webhook::ValidatePodGroupCreate(*podgroup, lister).size();
  });
  double jb = NanosPerCall(iterations, rounds,
                           [&] { return basalt::webhook::ValidateJobCreate(*job, lister).size(); });
  double qu = NanosPerCall(iterations, rounds, [&] {
    return basalt::webhook::ValidateQueueCreateOrUpdate(nullptr, *queue, lister, options).size();
  });
  std::printf(
      "podgroup_create_ns=%.0f job_create_ns=%.0f queue_create_ns=%.0f iterations=%ld "
      "rounds=%d\n",
      pg, jb, qu, iterations, rounds);
  return 0;
}
