#include "controllers/job/plugins/env/env.h"

namespace basalt::controllers {
namespace {

class EnvPlugin final : public JobPlugin {
 public:
  std::string_view Name() const override { return kEnvPluginName; }

  absl::Status OnPodCreate(json::Document& pod, const api::Job&, const api::TaskSpec&,
                           int32_t index) override {
    const std::string value = std::to_string(index);
    auto& a = pod.GetAllocator();
    ForEachContainer(pod, /*init=*/true, [&](json::Value& c) {
      AddEnv(c, kLegacyTaskIndexEnv, value, a);
      AddEnv(c, kTaskIndexEnv, value, a);
    });
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<json::Document>> OnJobAdd(const api::Job&) override {
    return std::vector<json::Document>();
  }

  std::vector<ObjectRef> OnJobDelete(const api::Job&) override { return {}; }
};

}  // namespace

absl::StatusOr<std::unique_ptr<JobPlugin>> NewEnvPlugin(const std::vector<std::string>& args) {
  FlagSet flags(kEnvPluginName);
  if (auto s = flags.Parse(args); !s.ok()) return s;
  return std::make_unique<EnvPlugin>();
}

}  // namespace basalt::controllers
