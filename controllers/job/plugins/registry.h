#pragma once
// The explicit registry of in-tree job plugins (no static registration: static libraries drop
// static initialisers). The reconcile loop creates a job's plugins from spec.plugins with
// CreatePlugins(); the admission webhook can validate plugin names and arguments the same way.
//
// A JobPluginRegistry is filled once at start-up and then only read; concurrent reads are safe.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "controllers/job/model.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

using JobPluginFactory =
    std::function<absl::StatusOr<std::unique_ptr<JobPlugin>>(const std::vector<std::string>& args)>;

class JobPluginRegistry {
 public:
  // Adds `name`; a second registration of the same name replaces the first.
  void Register(std::string name, JobPluginFactory factory);

  bool Has(std::string_view name) const;
  std::vector<std::string> Names() const;

  // Creates plugin `name` with `args`. kNotFound for an unknown name ("plugin X not found");
  // kInvalidArgument for bad arguments.
  absl::StatusOr<std::unique_ptr<JobPlugin>> Create(std::string_view name,
                                                    const std::vector<std::string>& args) const;

  // Creates every plugin of spec.plugins, in name order; the first error wins.
  absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>> CreatePlugins(
      const api::JobSpec& spec) const;

 private:
  std::map<std::string, JobPluginFactory, std::less<>> factories_;
};

// env, svc, ssh, mpi, pytorch, tensorflow, ray, hcclrank.
JobPluginRegistry NewJobPluginRegistry();

}  // namespace basalt::controllers
