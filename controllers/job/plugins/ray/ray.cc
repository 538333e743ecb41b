#include "controllers/job/plugins/ray/ray.h"

#include "fmt/format.h"

namespace basalt::controllers {
namespace {

void SetCommand(json::Value& container, const std::string& script, json::Allocator& a) {
  json::Value command(rapidjson::kArrayType);
  command.PushBack(json::MakeString("sh", a), a);
  command.PushBack(json::MakeString("-c", a), a);
  command.PushBack(json::MakeString(script, a), a);
  json::Set(container, "command", std::move(command), a);
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
    json::Document svc = NewOwnedObject(job, "v1", "Service", RayHeadServiceName(job.name()));
    auto& a = svc.GetAllocator();
    json::Value selector(rapidjson::kObjectType);
    json::Set(selector, api::kJobNameKey, json::MakeString(job.name(), a), a);
    json::Set(selector, api::kJobNamespaceKey, json::MakeString(job.namespace_name(), a), a);
    json::Set(selector, api::kTaskSpecKey, json::MakeString(o_.head, a), a);
    json::Value ports(rapidjson::kArrayType);
    auto port = [&](std::string_view name, int64_t number) {
      json::Value p(rapidjson::kObjectType);
      json::Set(p, "name", json::MakeString(name, a), a);
      json::Set(p, "port", json::Value(number), a);
      json::Set(p, "targetPort", json::MakeString(name, a), a);
      json::Set(p, "protocol", json::MakeString("TCP", a), a);
      ports.PushBack(std::move(p), a);
    };
    port(kRayGcsPortName, o_.port);
    port(kRayDashboardPortName, o_.dashboard_port);
    port(kRayClientPortName, o_.client_port);
    json::Value spec(rapidjson::kObjectType);
    json::Set(spec, "selector", std::move(selector), a);
    json::Set(spec, "ports", std::move(ports), a);
    json::Set(svc, "spec", std::move(spec), a);
    std::vector<json::Document> out;
    out.push_back(std::move(svc));
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
