#include "controllers/job/plugins/hcclrank/hcclrank.h"

#include <optional>

namespace basalt::controllers {
namespace {

// The value of env `name` in the first container that sets it with a literal value.
std::optional<std::string> EnvValue(const json::Document& pod, std::string_view name) {
  const json::Value* containers = json::FindPath(pod, {"spec", "containers"});
  if (containers == nullptr || !containers->IsArray()) return std::nullopt;
  for (const json::Value& c : containers->GetArray()) {
    const json::Value* env = json::Find(c, "env");
    if (env == nullptr || !env->IsArray()) continue;
    for (const json::Value& e : env->GetArray()) {
      if (json::GetString(e, "name") == name && json::Find(e, "value") != nullptr) {
        return std::string(json::GetString(e, "value"));
      }
    }
  }
  return std::nullopt;
}

class HcclRankPlugin final : public JobPlugin {
 public:
  HcclRankPlugin(std::string master, std::string worker)
      : master_(std::move(master)), worker_(std::move(worker)) {}

  std::string_view Name() const override { return kHcclRankPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job& job, const api::TaskSpec& task,
                           int32_t index) override {
    auto& a = pod.GetAllocator();
    json::Value& meta = json::EnsureObject(pod, "metadata", a);
    json::Value& annotations = json::EnsureObject(meta, "annotations", a);
    if (!json::GetString(annotations, kHcclRankAnnotation).empty()) return absl::OkStatus();
    std::string rank;
    if (std::optional<std::string> env = EnvValue(pod, "RANK"); env && !env->empty()) {
      rank = *env;
    } else if (task.name == master_) {
      rank = std::to_string(index);
    } else if (task.name == worker_) {
      const api::TaskSpec* master = job.spec().FindTask(master_);
      rank = std::to_string(int64_t{master != nullptr ? master->replicas : 0} + index);
    } else {
      return absl::OkStatus();
    }
    json::Set(annotations, kHcclRankAnnotation, json::MakeString(rank, a), a);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job&) override {
    return std::vector<json::Document>();
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job&) override { return {}; }

 private:
  const std::string master_;
  const std::string worker_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<JobPlugin>> NewHcclRankPlugin(const std::vector<std::string>& args) {
  std::string master = "master";
  std::string worker = "worker";
  FlagSet flags(kHcclRankPluginName);
  flags.String("master", &master);
  flags.String("worker", &worker);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<HcclRankPlugin>(std::move(master), std::move(worker));
}

}  // namespace basalt::controllers
