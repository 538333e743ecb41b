// controllers_raw_create: the baseline for the pod-creation benchmark. Creates N pods shaped
// like a job's pods with the same client, rate limits and number of requests in flight that
// vc-controller-manager uses for one job, and prints the wall time. Comparing it with the time
// the controller takes for a job of N replicas shows what the controller adds on top of the API
// server's own cost.
//
//   controllers_raw_create --kubeconfig=... --namespace=bench --count=1000 --concurrency=16
//     --kube-api-qps=1000 --kube-api-burst=1000   (one command line)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/util/status.h"
#include "controllers/app/controller.h"
#include "fmt/format.h"

int main(int argc, char** argv) {
  using namespace basalt;
  client::FlagSet flags("controllers_raw_create");
  client::ClientOptions client_options;
  client_options.AddFlags(flags);
  std::string ns = "default";
  std::string prefix = "raw";
  int count = 1000;
  int concurrency = 16;
  int pods_per_group = 0;
  flags.String("namespace", &ns, "namespace of the pods");
  flags.Int("pods-per-group", &pods_per_group,
            "with K > 0: also a PodGroup per K pods (created first), as the job controller does");
  flags.String("prefix", &prefix, "pod names are <prefix>-<i>");
  flags.Int("count", &count, "pods to create");
  flags.Int("concurrency", &concurrency, "creations in flight");
  if (absl::Status s = flags.Parse(argc, argv); !s.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(MessageOf(s)).c_str(), flags.Usage().c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<client::Client>> c = client::Client::FromOptions(client_options);
  if (!c.ok()) {
    std::fprintf(stderr, "client: %s\n", std::string(MessageOf(c.status())).c_str());
    return 1;
  }
  std::atomic<int> failed{0};
  auto create_pod = [&](size_t i) {
    const std::string group =
        pods_per_group > 0 ? fmt::format("{}-g{}", prefix, i / pods_per_group) : prefix;
    const std::string body = fmt::format(
        R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}-{}","namespace":"{}",)"
        R"("labels":{{"volcano.sh/job-name":"{}","volcano.sh/task-spec":"worker","volcano.sh/task-index":"{}"}},)"
        R"("annotations":{{"volcano.sh/job-name":"{}","volcano.sh/task-spec":"worker","volcano.sh/job-version":"0",)"
        R"("scheduling.k8s.io/group-name":"{}"}}}},)"
        R"("spec":{{"schedulerName":"volcano","restartPolicy":"Never","containers":[{{"name":"main","image":"busybox",)"
        R"("resources":{{"requests":{{"cpu":"10m"}}}}}}]}}}})",
        prefix, i, ns, group, i, group, group);
    absl::StatusOr<json::Document> r = (*c)->Create(client::Pods(), ns, body);
    if (!r.ok() && !absl::IsAlreadyExists(r.status())) ++failed;
  };
  const auto start = std::chrono::steady_clock::now();
  if (pods_per_group <= 0) {
    controllers::ParallelFor(static_cast<size_t>(count), static_cast<size_t>(concurrency),
                             create_pod);
  } else {
    // One job-shaped unit per group: its PodGroup, then its pods (one after the other).
    const size_t groups = (static_cast<size_t>(count) + pods_per_group - 1) / pods_per_group;
    controllers::ParallelFor(groups, static_cast<size_t>(concurrency), [&](size_t g) {
      const std::string body = fmt::format(
          R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{{"name":"{}-g{}","namespace":"{}"}},)"
          R"("spec":{{"minMember":{},"queue":"default"}}}})",
          prefix, g, ns, pods_per_group);
      absl::StatusOr<json::Document> r = (*c)->Create(client::PodGroups(), ns, body);
      if (!r.ok() && !absl::IsAlreadyExists(r.status())) ++failed;
      for (size_t i = g * pods_per_group;
           i < std::min<size_t>((g + 1) * pods_per_group, static_cast<size_t>(count)); ++i) {
        create_pod(i);
      }
    });
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("created=%d failed=%d seconds=%.3f pods_per_second=%.1f\n", count - failed.load(),
              failed.load(), seconds, count / seconds);
  return failed.load() == 0 ? 0 : 1;
}
