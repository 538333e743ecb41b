#include "controllers/job/plugins/pytorch/pytorch.h"

#include "controllers/job/plugins/objects.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

class PytorchPlugin final : public JobPlugin {
 public:
  PytorchPlugin(std::string master, std::string worker, int64_t port, bool wait_master,
                int64_t wait_timeout, std::string wait_image)
      : master_(std::move(master)),
        worker_(std::move(worker)),
        port_(port),
        wait_master_(wait_master),
        wait_timeout_(wait_timeout),
        wait_image_(std::move(wait_image)) {}

  std::string_view Name() const override { return kPytorchPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec& task,
                           int32_t index) override {
    const api::TaskSpec* master = job.spec().FindTask(master_);
    if (master == nullptr) return absl::OkStatus();
    const bool is_master = task.name == master_;
    const bool is_worker = task.name == worker_;
    if (!is_master && !is_worker) return absl::OkStatus();

    const std::vector<std::string> master_hosts = TaskHosts(job, *master);
    const std::string master_addr = master_hosts.empty() ? "" : master_hosts.front();
    int64_t world_size = master->replicas;
    if (const api::TaskSpec* worker = job.spec().FindTask(worker_)) world_size += worker->replicas;
    const std::string rank = is_master ? "0" : std::to_string(int64_t{index} + 1);
    const std::string port = std::to_string(port_);
    const std::string world = std::to_string(world_size);

    auto& a = pod.GetAllocator();
    ForEachContainer(pod, /*init=*/false, [&](json::Value& c) {
      AddEnv(c, "MASTER_ADDR", master_addr, a);
      AddEnv(c, "MASTER_PORT", port, a);
      AddEnv(c, "WORLD_SIZE", world, a);
      AddEnv(c, "RANK", rank, a);
      AddContainerPort(c, kPytorchPortName, port_, a);
    });
    if (is_worker && wait_master_) AddWaitForMaster(pod, master_addr);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job&) override {
    return std::vector<json::Document>();
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job&) override { return {}; }

 private:
  void AddWaitForMaster(json::Document& pod, const std::string& master_addr) const {
    auto& a = pod.GetAllocator();
    json::Value& spec = json::EnsureObject(pod, "spec", a);
    json::Value* inits = json::FindMutable(spec, "initContainers");
    if (inits == nullptr || !inits->IsArray()) {
      json::Set(spec, "initContainers", json::Value(rapidjson::kArrayType), a);
      inits = json::FindMutable(spec, "initContainers");
    }
    for (const auto& c : inits->GetArray()) {
      if (json::GetString(c, "name") == kWaitForMasterName) return;
    }
    const std::string script = fmt::format(
        "timeout {0} sh -c 'until nc -z {1} {2}; do echo waiting for master {1}:{2}; sleep 2; "
        "done'",
        wait_timeout_, master_addr, port_);
    json::Value c(rapidjson::kObjectType);
    json::Set(c, "name", json::MakeString(kWaitForMasterName, a), a);
    json::Set(c, "image", json::MakeString(wait_image_, a), a);
    json::Set(c, "command", ShellCommand(script, a), a);
    // Runs before the user's init containers: they may already need the master.
    json::Value rebuilt(rapidjson::kArrayType);
    rebuilt.PushBack(std::move(c), a);
    for (auto& existing : inits->GetArray()) rebuilt.PushBack(std::move(existing), a);
    *inits = std::move(rebuilt);
  }

  const std::string master_;
  const std::string worker_;
  const int64_t port_;
  const bool wait_master_;
  const int64_t wait_timeout_;
  const std::string wait_image_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<JobPlugin>> NewPytorchPlugin(const std::vector<std::string>& args) {
  std::string master = "master";
  std::string worker = "worker";
  int64_t port = 23456;
  bool wait_master = false;
  int64_t wait_timeout = 300;
  std::string wait_image = "busybox:1.36.1";
  FlagSet flags(kPytorchPluginName);
  flags.String("master", &master);
  flags.String("worker", &worker);
  flags.Int("port", &port);
  flags.Bool("wait-master-enabled", &wait_master);
  flags.Int("wait-master-timeout", &wait_timeout);
  flags.String("wait-master-image", &wait_image);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<PytorchPlugin>(std::move(master), std::move(worker), port, wait_master,
                                         wait_timeout, std::move(wait_image));
}

}  // namespace basalt::controllers
