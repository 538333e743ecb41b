// Resident memory of a real SharedInformer holding every pod of a namespace, listed and watched
// from a live API server, with whole documents (the default) and with api::CompactPod (what the
// scheduler asks for). Complements informer_store_memory_bench (Store only, synthetic pods).
//
//   informer_rss_bench create   --kubeconfig F --namespace NS --pods N   (32 writers)
//   informer_rss_bench document --kubeconfig F --namespace NS            (one mode per process)
//   informer_rss_bench compact  --kubeconfig F --namespace NS
//
// Prints "name value unit" lines. Figures only; nothing here passes or fails.

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/flags.h"
#include "bench/common/process_memory.h"
#include "common/client/client.h"
#include "common/informer/shared_informer.h"
#include "common/informer/transforms.h"
#include "fmt/format.h"

namespace client = basalt::client;
namespace informer = basalt::informer;
using SteadyClock = std::chrono::steady_clock;

namespace {

std::unique_ptr<client::Client> NewClient(const std::string& kubeconfig) {
  client::ClientOptions options;
  options.kubeconfig = kubeconfig;
  options.kube_api_qps = 0;  // no client-side limit: measure the server, not the limiter
  absl::StatusOr<std::unique_ptr<client::Client>> c = client::Client::FromOptions(options);
  if (!c.ok()) {
    std::fprintf(stderr, "client: %s\n", std::string(c.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(c);
}

// An unbound job worker pod (schedulerName nobody serves, so nothing touches it), ~1.5 KB as
// the server returns it after defaulting.
std::string PodJson(const std::string& ns, int i) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"job-{job}-worker-{idx}","namespace":"{ns}",)"
      R"("labels":{{"volcano.sh/job-name":"job-{job}","volcano.sh/queue-name":"default","volcano.sh/task-spec":"worker"}},)"
      R"("annotations":{{"scheduling.k8s.io/group-name":"job-{job}","volcano.sh/task-index":"{idx}"}}}},)"
      R"("spec":{{"schedulerName":"basalt-bench-nobody","priorityClassName":"","restartPolicy":"OnFailure",)"
      R"("containers":[{{"name":"main","image":"registry.example.com/ml/trainer:v1.2.3",)"
      R"("command":["python","-m","trainer"],"env":[{{"name":"VC_TASK_INDEX","value":"{idx}"}}],)"
      R"("resources":{{"requests":{{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},)"
      R"("limits":{{"nvidia.com/gpu":"1"}}}}}}],)"
      R"("tolerations":[{{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}}]}}}})",
      fmt::arg("ns", ns), fmt::arg("job", i / 8), fmt::arg("idx", i % 8));
}

int Create(const std::string& kubeconfig, const std::string& ns, int pods) {
  std::unique_ptr<client::Client> c = NewClient(kubeconfig);
  absl::Status s =
      c->Create(client::Namespaces(), "",
                fmt::format(
                    R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})", ns))
          .status();
  if (!s.ok() && !absl::IsAlreadyExists(s)) {
    std::fprintf(stderr, "namespace: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::atomic<int> next{0}, errors{0};
  auto t0 = SteadyClock::now();
  std::vector<std::thread> writers;
  for (int w = 0; w < 32; ++w) {
    writers.emplace_back([&] {
      for (int i = next++; i < pods; i = next++) {
        absl::Status st = c->Create(client::Pods(), ns, PodJson(ns, i)).status();
        if (!st.ok() && !absl::IsAlreadyExists(st)) ++errors;
      }
    });
  }
  for (std::thread& t : writers) t.join();
  double secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  std::printf("created_pods %d count (%d errors) in %.1f s\n", pods, errors.load(), secs);
  return errors.load() == 0 ? 0 : 1;
}

int Measure(const std::string& kubeconfig, const std::string& ns, bool compact) {
  std::unique_ptr<client::Client> c = NewClient(kubeconfig);
  // Warm the connection pool and TLS so their memory is in the baseline.
  (void)c->Get(client::Namespaces(), "", ns);
  malloc_trim(0);
  const long before = basalt::bench::CurrentRssKiB();
  informer::InformerOptions options;
  options.source.resource = client::Pods();
  options.source.namespace_name = ns;
  if (compact) options.transform = informer::CompactPodTransform();
  informer::SharedInformer inf(c.get(), options);
  auto t0 = SteadyClock::now();
  inf.Start();
  if (!inf.WaitForCacheSync(std::stop_token(), std::chrono::minutes(5))) {
    std::fprintf(stderr, "informer did not sync\n");
    return 1;
  }
  double secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  malloc_trim(0);
  const long after = basalt::bench::CurrentRssKiB();
  const size_t n = inf.store().size();
  const char* mode = compact ? "compact" : "document";
  std::printf("informer_%s_pods %zu count\n", mode, n);
  std::printf("informer_%s_sync_seconds %.2f s\n", mode, secs);
  std::printf("informer_%s_rss_growth %.1f MiB (%.0f B/pod)\n", mode, (after - before) / 1024.0,
              n > 0 ? (after - before) * 1024.0 / static_cast<double>(n) : 0.0);
  std::printf("informer_%s_rss_total %.1f MiB\n", mode, after / 1024.0);
  inf.Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig, ns = "informer-rss-bench";
  int pods = 50000;
  basalt::FlagSet flags("informer_rss_bench create|document|compact");
  flags.String("kubeconfig", &kubeconfig, "kubeconfig");
  flags.String("namespace", &ns, "namespace of the pods");
  flags.Int("pods", &pods, "pods to create (create)");
  std::vector<std::string> positional;
  basalt::bench::ParseFlagsOrExit(flags, argc, argv, &positional);
  const std::string mode = positional.size() == 1 ? positional[0] : "";
  if (mode == "create") return Create(kubeconfig, ns, pods);
  if (mode == "document") return Measure(kubeconfig, ns, false);
  if (mode == "compact") return Measure(kubeconfig, ns, true);
  std::fprintf(stderr, "usage: informer_rss_bench create|document|compact --kubeconfig F ...\n");
  return 2;
}
