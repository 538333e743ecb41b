#include "controllers/job/plugins/pytorch/pytorch.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

api::Job Job() {
  return MakeJob("pt")
      .Task(MakeTask("master").Replicas(1).Container("c"))
      .Task(MakeTask("worker").Replicas(3).Container("c").Container("sidecar"))
      .Task(MakeTask("other").Replicas(1).Container("c"))
      .Build();
}

TEST_CASE("PytorchPlugin: rendezvous env per pod", "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewPytorchPlugin({});
  REQUIRE(plugin.ok());
  struct Case {
    std::string task;
    int32_t index;
    std::string rank;
  };
  for (const Case& c :
       std::vector<Case>{{"master", 0, "0"}, {"worker", 0, "1"}, {"worker", 2, "3"}}) {
    INFO(c.task << "-" << c.index);
    json::Document pod = PodWith(**plugin, job, c.task, c.index);
    for (const json::Value* ctr : Containers(pod)) {
      CHECK(Env(*ctr, "MASTER_ADDR") == "pt-master-0.pt");
      CHECK(Env(*ctr, "MASTER_PORT") == "23456");
      CHECK(Env(*ctr, "WORLD_SIZE") == "4");
      CHECK(Env(*ctr, "RANK") == c.rank);
      CHECK(PortNamed(*ctr, "pytorchjob-port") == 23456);
    }
    CHECK(Containers(pod, /*init=*/true).empty());
  }
  json::Document other = PodWith(**plugin, job, "other", 0);
  CHECK_FALSE(Env(*Containers(other)[0], "RANK"));
}

TEST_CASE("PytorchPlugin: custom flags and the wait-for-master init container",
          "[controllers][job][plugins]") {
  api::Job job = MakeJob("pt")
                     .Task(MakeTask("lead").Replicas(1).Container("c"))
                     .Task(MakeTask("w").Replicas(2).Container("c").InitContainer("user-init"))
                     .Build();
  auto plugin =
      NewPytorchPlugin({"--master=lead", "--worker=w", "--port=1234", "--wait-master-enabled",
                        "--wait-master-timeout=60", "--wait-master-image=busybox:stable"});
  REQUIRE(plugin.ok());
  json::Document worker = PodWith(**plugin, job, "w", 1);
  CHECK(Env(*Containers(worker)[0], "MASTER_ADDR") == "pt-lead-0.pt");
  CHECK(Env(*Containers(worker)[0], "MASTER_PORT") == "1234");
  CHECK(Env(*Containers(worker)[0], "WORLD_SIZE") == "3");
  CHECK(Env(*Containers(worker)[0], "RANK") == "2");
  auto inits = Containers(worker, /*init=*/true);
  REQUIRE(inits.size() == 2);
  CHECK(json::GetString(*inits[0], "name") == "wait-for-master");
  CHECK(json::GetString(*inits[0], "image") == "busybox:stable");
  const std::string script(json::AsView((*json::Find(*inits[0], "command"))[2]));
  CHECK(script.find("timeout 60 ") == 0);
  CHECK(script.find("nc -z pt-lead-0.pt 1234") != std::string::npos);
  CHECK(json::GetString(*inits[1], "name") == "user-init");
  // The master does not wait for itself.
  json::Document master = PodWith(**plugin, job, "lead", 0);
  CHECK(Containers(master, /*init=*/true).empty());
}

TEST_CASE("PytorchPlugin: a job without the master task is left alone",
          "[controllers][job][plugins]") {
  api::Job job = MakeJob("pt").Task(MakeTask("worker").Replicas(2).Container("c")).Build();
  auto plugin = NewPytorchPlugin({});
  REQUIRE(plugin.ok());
  json::Document pod = PodWith(**plugin, job, "worker", 0);
  CHECK(json::Find(*Containers(pod)[0], "env") == nullptr);
}

}  // namespace
}  // namespace basalt::controllers
