#include "controllers/job/plugins/tensorflow/tensorflow.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

TEST_CASE("TensorflowPlugin: TF_CONFIG describes the cluster and the pod's role",
          "[controllers][job][plugins]") {
  api::Job job = MakeJob("tf")
                     .Task(MakeTask("ps").Replicas(1).Container("c"))
                     .Task(MakeTask("worker").Replicas(2).Container("c").Container("d"))
                     .Task(MakeTask("chief").Replicas(1).Container("c"))
                     .Task(MakeTask("logger").Replicas(1).Container("c"))
                     .Build();
  auto plugin = NewTensorflowPlugin({});
  REQUIRE(plugin.ok());
  const std::string cluster = R"("cluster":{"ps":["tf-ps-0.tf:2222"],)"
                              R"("worker":["tf-worker-0.tf:2222","tf-worker-1.tf:2222"],)"
                              R"("chief":["tf-chief-0.tf:2222"]})";
  struct Case {
    std::string task;
    int32_t index;
    std::string json;
  };
  for (const Case& c : std::vector<Case>{
           {"ps", 0, "{" + cluster + R"(,"task":{"type":"ps","index":0}})"},
           {"worker", 1, "{" + cluster + R"(,"task":{"type":"worker","index":1}})"},
           {"chief", 0, "{" + cluster + R"(,"task":{"type":"chief","index":0}})"},
       }) {
    INFO(c.task);
    json::Document pod = PodWith(**plugin, job, c.task, c.index);
    for (const json::Value* ctr : Containers(pod)) CHECK(Env(*ctr, "TF_CONFIG") == c.json);
  }
  json::Document logger = PodWith(**plugin, job, "logger", 0);
  CHECK_FALSE(Env(*Containers(logger)[0], "TF_CONFIG"));
}

TEST_CASE("TensorflowPlugin: role flags, port and the evaluator", "[controllers][job][plugins]") {
  api::Job job = MakeJob("tf")
                     .Task(MakeTask("param").Replicas(2).Container("c"))
                     .Task(MakeTask("eval").Replicas(1).Container("c"))
                     .Build();
  auto plugin = NewTensorflowPlugin({"--ps=param", "--evaluator=eval", "--port=3000"});
  REQUIRE(plugin.ok());
  json::Document pod = PodWith(**plugin, job, "eval", 0);
  CHECK(Env(*Containers(pod)[0], "TF_CONFIG") ==
        R"({"cluster":{"ps":["tf-param-0.tf:3000","tf-param-1.tf:3000"],)"
        R"("evaluator":["tf-eval-0.tf:3000"]},"task":{"type":"evaluator","index":0}})");
}

TEST_CASE("TensorflowPlugin: a single pod job gets no TF_CONFIG", "[controllers][job][plugins]") {
  api::Job job = MakeJob("tf").Task(MakeTask("worker").Replicas(1).Container("c")).Build();
  auto plugin = NewTensorflowPlugin({});
  REQUIRE(plugin.ok());
  json::Document pod = PodWith(**plugin, job, "worker", 0);
  CHECK_FALSE(Env(*Containers(pod)[0], "TF_CONFIG"));
}

}  // namespace
}  // namespace basalt::controllers
