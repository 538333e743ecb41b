#include "controllers/job/plugins/ray/ray.h"

#include "controllers/job/plugins/objects.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

void SetCommand(json::Value& container, const std::string& script, json::Allocator& a) {
  json::Set(container, "command", ShellCommand(script, a), a);
}

class RayPlugin final : public JobPlugin {
 public:
  struct Options {
    std::string head = "head";
    std::string head_container = "head";
    std::string worker = "worker";
    std::string worker_container = "worker";
    int64_t port = 6379;
    int64_t dashboard_port = 8265;
    int64_t client_port = 10001;
  };
  explicit RayPlugin(Options o) : o_(std::move(o)) {}

  std::string_view Name() const override { return kRayPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec& task,
                           int32_t) override {
    const api::TaskSpec* head = job.spec().FindTask(o_.head);
    if (head == nullptr) {
      return absl::FailedPreconditionError(
          fmt::format("job {} doesn't have head task {}", job.name(), o_.head));
    }
    const bool is_head = task.name == o_.head;
    const bool is_worker = task.name == o_.worker;
    if (!is_head && !is_worker) return absl::OkStatus();
    auto& a = pod.GetAllocator();
    const std::vector<std::string> hosts = TaskHosts(job, *head);
    const std::string head_addr = hosts.empty() ? "" : hosts.front();
    ForEachContainer(pod, /*init=*/false, [&](json::Value& c) {
      const std::string_view name = json::GetString(c, "name");
      if (is_head && name == o_.head_container) {
        AddContainerPort(c, kRayGcsPortName, o_.port, a);
        AddContainerPort(c, kRayDashboardPortName, o_.dashboard_port, a);
        AddContainerPort(c, kRayClientPortName, o_.client_port, a);
        SetCommand(c,
                   fmt::format("ray start --head --block --dashboard-host=0.0.0.0 --port={} "
                               "--dashboard-port={} --ray-client-server-port={}",
                               o_.port, o_.dashboard_port, o_.client_port),
                   a);
      } else if (is_worker && name == o_.worker_container) {
        SetCommand(c, fmt::format("ray start --block --address={}:{}", head_addr, o_.port), a);
      }
    });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job& job) override {
    ServiceSpec spec;
    spec.selector = JobPodSelector(job);
    spec.selector[std::string(api::kTaskSpecKey)] = o_.head;
    for (const auto& [name, number] :
         {std::pair{kRayGcsPortName, o_.port}, std::pair{kRayDashboardPortName, o_.dashboard_port},
          std::pair{kRayClientPortName, o_.client_port}}) {
      spec.ports.push_back({std::string(name), number, std::string(name)});
    }
    std::vector<json::Document> out;
    out.push_back(BuildService(job, RayHeadServiceName(job.name()), spec));
    return out;
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job& job) override {
    return {{"v1", "Service", std::string(job.namespace_name()), RayHeadServiceName(job.name())}};
  }

 private:
  const Options o_;
};

}  // namespace

std::string RayHeadServiceName(std::string_view job) { return fmt::format("{}-head", job); }

absl::StatusOr<std::unique_ptr<JobPlugin>> NewRayPlugin(const std::vector<std::string>& args) {
  RayPlugin::Options o;
  FlagSet flags(kRayPluginName);
  flags.String("head", &o.head);
  flags.String("headContainer", &o.head_container);
  flags.String("worker", &o.worker);
  flags.String("workerContainer", &o.worker_container);
  flags.Int("port", &o.port);
  flags.Int("dashboardPort", &o.dashboard_port);
  flags.Int("clientPort", &o.client_port);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<RayPlugin>(std::move(o));
}

}  // namespace basalt::controllers
