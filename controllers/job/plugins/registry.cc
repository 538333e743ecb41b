#include "controllers/job/plugins/registry.h"

#include "controllers/job/plugins/env/env.h"
#include "controllers/job/plugins/hcclrank/hcclrank.h"
#include "controllers/job/plugins/mpi/mpi.h"
#include "controllers/job/plugins/pytorch/pytorch.h"
#include "controllers/job/plugins/ray/ray.h"
#include "controllers/job/plugins/ssh/ssh.h"
#include "controllers/job/plugins/svc/svc.h"
#include "controllers/job/plugins/tensorflow/tensorflow.h"
#include "fmt/format.h"

namespace basalt::controllers {

void JobPluginRegistry::Register(std::string name, JobPluginFactory factory) {
  factories_[std::move(name)] = std::move(factory);
}

bool JobPluginRegistry::Has(std::string_view name) const {
  return factories_.find(name) != factories_.end();
}

std::vector<std::string> JobPluginRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, f] : factories_) names.push_back(name);
  return names;
}

absl::StatusOr<std::unique_ptr<JobPlugin>> JobPluginRegistry::Create(
    std::string_view name, const std::vector<std::string>& args) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    return absl::NotFoundError(fmt::format("plugin {} not found", name));
  }
  return it->second(args);
}

absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>> JobPluginRegistry::CreatePlugins(
    const api::JobSpec& spec) const {
  std::vector<std::unique_ptr<JobPlugin>> out;
  for (const auto& [name, args] : spec.plugins) {
    auto p = Create(name, args);
    if (!p.ok()) return p.status();
    out.push_back(*std::move(p));
  }
  return out;
}

JobPluginRegistry NewJobPluginRegistry() {
  JobPluginRegistry r;
  r.Register(std::string(kEnvPluginName), NewEnvPlugin);
  r.Register(std::string(kSvcPluginName), NewSvcPlugin);
  r.Register(std::string(kSshPluginName), NewSshPlugin);
  r.Register(std::string(kMpiPluginName), NewMpiPlugin);
  r.Register(std::string(kPytorchPluginName), NewPytorchPlugin);
  r.Register(std::string(kTensorflowPluginName), NewTensorflowPlugin);
  r.Register(std::string(kRayPluginName), NewRayPlugin);
  r.Register(std::string(kHcclRankPluginName), NewHcclRankPlugin);
  return r;
}

}  // namespace basalt::controllers
