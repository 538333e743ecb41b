#include "controllers/job/plugins/env/env.h"

#include <catch2/catch.hpp>

#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

TEST_CASE("EnvPlugin: every container gets VC_TASK_INDEX and VK_TASK_INDEX",
          "[controllers][job][plugins]") {
  api::Job job =
      MakeJob("j")
          .Task(MakeTask("worker").Replicas(3).Container("a").Container("b").InitContainer("i"))
          .Build();
  auto plugin = NewEnvPlugin({});
  REQUIRE(plugin.ok());
  for (int32_t index : {0, 2}) {
    json::Document pod = PodWith(**plugin, job, "worker", index);
    for (bool init : {false, true}) {
      for (const json::Value* c : Containers(pod, init)) {
        CHECK(Env(*c, "VC_TASK_INDEX") == std::to_string(index));
        CHECK(Env(*c, "VK_TASK_INDEX") == std::to_string(index));
      }
    }
  }
  CHECK((*plugin)->OnJobAdd(job)->empty());
  CHECK((*plugin)->OnJobDelete(job).empty());
}

}  // namespace
}  // namespace basalt::controllers
