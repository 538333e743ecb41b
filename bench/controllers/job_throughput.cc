// controllers_job_throughput: the job side of the jobs/s benchmark. Creates N small Jobs
// (1 task x --replicas pods) with --concurrency creations in flight and plays the scheduler's
// admission: PodGroups without a phase are set Inqueue (status subresource) as soon as a LIST
// sees them, so the controller may create the pods. Exits once every Job's PodGroup has been
// admitted; bench/controllers/job_throughput.sh then waits for the pods and computes jobs/s.
//
//   controllers_job_throughput --kubeconfig=... --namespace=bench --jobs=500 --replicas=2
//     --concurrency=16 --kube-api-qps=1000 --kube-api-burst=1000   (one command line)

#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "controllers/app/controller.h"
#include "fmt/format.h"

int main(int argc, char** argv) {
  using namespace basalt;
  client::FlagSet flags("controllers_job_throughput");
  client::ClientOptions client_options;
  client_options.AddFlags(flags);
  std::string ns = "default";
  std::string prefix = "tp";
  int jobs = 500;
  int replicas = 2;
  int concurrency = 16;
  flags.String("namespace", &ns, "namespace of the Jobs");
  flags.String("prefix", &prefix, "Jobs are <prefix>-<i>");
  flags.Int("jobs", &jobs, "Jobs to create");
  flags.Int("replicas", &replicas, "pods per Job (one task)");
  flags.Int("concurrency", &concurrency, "creations and admissions in flight");
  if (absl::Status s = flags.Parse(argc, argv); !s.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(MessageOf(s)).c_str(), flags.Usage().c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<client::Client>> c = client::Client::FromOptions(client_options);
  if (!c.ok()) {
    std::fprintf(stderr, "client: %s\n", std::string(MessageOf(c.status())).c_str());
    return 1;
  }
  client::Client& api = **c;
  const auto start = std::chrono::steady_clock::now();
  auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };

  // The scheduler's enqueue, by LIST + status PATCH.
  std::atomic<bool> created_all{false};
  std::atomic<int> failed{0};
  std::thread admitter([&] {
    std::set<std::string> admitted;
    while (static_cast<int>(admitted.size()) < jobs) {
      absl::StatusOr<client::ObjectList> pgs = api.ListAll(client::PodGroups(), ns);
      std::vector<std::string> todo;
      if (pgs.ok()) {
        for (const json::Document& pg : pgs->items) {
          const json::Value* phase = json::FindPath(pg, {"status", "phase"});
          std::string name(json::AsView(*json::FindPath(pg, {"metadata", "name"})));
          if ((phase == nullptr || json::AsView(*phase).empty() ||
               json::AsView(*phase) == "Pending") &&
              admitted.count(name) == 0) {
            todo.push_back(std::move(name));
          }
        }
      }
      controllers::ParallelFor(todo.size(), static_cast<size_t>(concurrency), [&](size_t i) {
        absl::StatusOr<json::Document> r =
            api.Patch(client::PodGroups(), ns, todo[i], client::PatchType::kMerge,
                      R"({"status":{"phase":"Inqueue"}})", "status");
        if (!r.ok()) ++failed;
      });
      admitted.insert(todo.begin(), todo.end());
      if (todo.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (created_all && since_start() > 600) break;
    }
  });

  controllers::ParallelFor(static_cast<size_t>(jobs), static_cast<size_t>(concurrency), [&](size_t i) {
    const std::string body = fmt::format(
        R"({{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{{"name":"{}-{}","namespace":"{}"}},)"
        R"("spec":{{"schedulerName":"volcano","queue":"default","minAvailable":{},"maxRetry":3,)"
        R"("tasks":[{{"name":"worker","replicas":{},"minAvailable":{},"maxRetry":3,"template":{{"spec":{{)"
        R"("restartPolicy":"Never","containers":[{{"name":"main","image":"busybox",)"
        R"("resources":{{"requests":{{"cpu":"10m"}}}}}}]}}}}}}]}}}})",
        prefix, i, ns, replicas, replicas, replicas);
    absl::StatusOr<json::Document> r = api.Create(client::VolcanoJobs(), ns, body);
    if (!r.ok() && !absl::IsAlreadyExists(r.status())) ++failed;
  });
  const double created_seconds = since_start();
  created_all = true;
  admitter.join();
  std::printf("jobs=%d created_seconds=%.3f admitted_seconds=%.3f failed=%d\n", jobs,
              created_seconds, since_start(), failed.load());
  return failed.load() == 0 ? 0 : 1;
}
