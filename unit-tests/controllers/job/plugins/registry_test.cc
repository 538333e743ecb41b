#include "controllers/job/plugins/registry.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;

TEST_CASE("JobPluginRegistry: the in-tree plugins are registered by name",
          "[controllers][job][plugins]") {
  JobPluginRegistry r = NewJobPluginRegistry();
  CHECK(r.Names() == std::vector<std::string>{"env", "hcclrank", "mpi", "pytorch", "ray", "ssh",
                                              "svc", "tensorflow"});
  for (const auto& name : r.Names()) {
    INFO(name);
    auto p = r.Create(name, {});
    REQUIRE(p.ok());
    CHECK((*p)->Name() == name);
  }
}

TEST_CASE("JobPluginRegistry: unknown plugins and bad arguments are errors",
          "[controllers][job][plugins]") {
  JobPluginRegistry r = NewJobPluginRegistry();
  CHECK(r.Create("horovod", {}).status().code() == absl::StatusCode::kNotFound);
  CHECK(r.Create("svc", {"--no-such-flag"}).status().code() == absl::StatusCode::kInvalidArgument);
  api::Job job = MakeJob("j").Task(MakeTask("t").Replicas(1)).Plugin("svc").Plugin("env").Build();
  auto plugins = r.CreatePlugins(job.spec());
  REQUIRE(plugins.ok());
  REQUIRE(plugins->size() == 2);
  CHECK((*plugins)[0]->Name() == "env");
  CHECK((*plugins)[1]->Name() == "svc");
  api::JobSpec bogus = job.spec();
  bogus.plugins["bogus"] = {};
  CHECK_FALSE(r.CreatePlugins(bogus).ok());
}

}  // namespace
}  // namespace basalt::controllers
