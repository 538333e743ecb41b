#include "controllers/job/plugins/tensorflow/tensorflow.h"

#include <array>
#include <utility>

#include "fmt/format.h"

namespace basalt::controllers {
namespace {

struct Role {
  std::string_view type;  // the TF_CONFIG role
  std::string task;       // the task that plays it
};

class TensorflowPlugin final : public JobPlugin {
 public:
  TensorflowPlugin(std::array<Role, 4> roles, int64_t port)
      : roles_(std::move(roles)), port_(port) {}

  std::string_view Name() const override { return kTensorflowPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec& task,
                           int32_t index) override {
    if (job.spec().tasks.size() == 1 && job.spec().tasks[0].replicas == 1) return absl::OkStatus();
    const Role* own = nullptr;
    for (const auto& r : roles_) {
      if (r.task == task.name) own = &r;
    }
    if (own == nullptr) return absl::OkStatus();

    json::Document config;
    config.SetObject();
    auto& ca = config.GetAllocator();
    json::Value cluster(rapidjson::kObjectType);
    for (const auto& r : roles_) {
      const api::TaskSpec* t = job.spec().FindTask(r.task);
      if (t == nullptr) continue;
      json::Value hosts(rapidjson::kArrayType);
      for (const auto& h : TaskHosts(job, *t)) {
        hosts.PushBack(json::MakeString(fmt::format("{}:{}", h, port_), ca), ca);
      }
      json::Set(cluster, r.type, std::move(hosts), ca);
    }
    json::Set(config, "cluster", std::move(cluster), ca);
    json::Value t(rapidjson::kObjectType);
    json::Set(t, "type", json::MakeString(own->type, ca), ca);
    json::Set(t, "index", json::Value(index), ca);
    json::Set(config, "task", std::move(t), ca);
    const std::string tf_config = json::Serialize(config);

    auto& a = pod.GetAllocator();
    ForEachContainer(pod, /*init=*/false,
                     [&](json::Value& c) { AddEnv(c, kTfConfigEnv, tf_config, a); });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job&) override {
    return std::vector<json::Document>();
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job&) override { return {}; }

 private:
  const std::array<Role, 4> roles_;
  const int64_t port_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<JobPlugin>> NewTensorflowPlugin(
    const std::vector<std::string>& args) {
  std::array<Role, 4> roles = {{
      {"ps", "ps"},
      {"worker", "worker"},
      {"chief", "chief"},
      {"evaluator", "evaluator"},
  }};
  int64_t port = 2222;
  FlagSet flags(kTensorflowPluginName);
  flags.String("ps", &roles[0].task);
  flags.String("worker", &roles[1].task);
  flags.String("chief", &roles[2].task);
  flags.String("evaluator", &roles[3].task);
  flags.Int("port", &port);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<TensorflowPlugin>(std::move(roles), port);
}

}  // namespace basalt::controllers
