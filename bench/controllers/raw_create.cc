// controllers_raw_create: the baseline for the pod-creation benchmark. Creates N pods shaped
// like a job's pods with the same client, rate limits and number of requests in flight that
// vc-controller-manager uses for one job, and prints the wall time. Comparing it with the time
// the controller takes for a job of N replicas shows what the controller adds on top of the API
// server's own cost.
//
//   controllers_raw_create --kubeconfig=... --namespace=bench --count=1000 --concurrency=16
//     --kube-api-qps=1000 --kube-api-burst=1000   (one command line)

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
  flags.String("namespace", &ns, "namespace of the pods");
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
  const auto start = std::chrono::steady_clock::now();
  controllers::ParallelFor(static_cast<size_t>(count), static_cast<size_t>(concurrency), [&](size_t i) {
    const std::string body = fmt::format(
        R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}-{}","namespace":"{}",)"
        R"("labels":{{"volcano.sh/job-name":"{}","volcano.sh/task-spec":"worker","volcano.sh/task-index":"{}"}},)"
        R"("annotations":{{"volcano.sh/job-name":"{}","volcano.sh/task-spec":"worker","volcano.sh/job-version":"0"}}}},)"
        R"("spec":{{"schedulerName":"volcano","restartPolicy":"Never","containers":[{{"name":"main","image":"busybox",)"
        R"("resources":{{"requests":{{"cpu":"10m"}}}}}}]}}}})",
        prefix, i, ns, prefix, i, prefix);
    absl::StatusOr<json::Document> r = (*c)->Create(client::Pods(), ns, body);
    if (!r.ok() && !absl::IsAlreadyExists(r.status())) ++failed;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("created=%d failed=%d seconds=%.3f pods_per_second=%.1f\n", count - failed.load(),
              failed.load(), seconds, count / seconds);
  return failed.load() == 0 ? 0 : 1;
}
