#include "controllers/job/plugins/mpi/mpi.h"

namespace basalt::controllers {
namespace {

class MpiPlugin final : public JobPlugin {
 public:
  MpiPlugin(std::string master, std::string worker, int64_t port)
      : master_(std::move(master)), worker_(std::move(worker)), port_(port) {}

  std::string_view Name() const override { return kMpiPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec& task,
                           int32_t) override {
    auto& a = pod.GetAllocator();
    if (task.name == master_) {
      std::string hosts;
      if (const api::TaskSpec* worker = job.spec().FindTask(worker_)) {
        for (const auto& h : TaskHosts(job, *worker)) {
          if (!hosts.empty()) hosts += ",";
          hosts += h;
        }
      }
      ForEachContainer(pod, /*init=*/false,
                       [&](json::Value& c) { AddEnv(c, kMpiHostEnv, hosts, a); });
    }
    ForEachContainer(pod, /*init=*/true,
                     [&](json::Value& c) { AddContainerPort(c, kMpiPortName, port_, a); });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job&) override {
    return std::vector<json::Document>();
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job&) override { return {}; }

 private:
  const std::string master_;
  const std::string worker_;
  const int64_t port_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<JobPlugin>> NewMpiPlugin(const std::vector<std::string>& args) {
  std::string master = "master";
  std::string worker = "worker";
  int64_t port = 22;
  FlagSet flags(kMpiPluginName);
  flags.String("master", &master);
  flags.String("worker", &worker);
  flags.Int("port", &port);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<MpiPlugin>(std::move(master), std::move(worker), port);
}

}  // namespace basalt::controllers
