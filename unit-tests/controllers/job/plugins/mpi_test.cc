#include "controllers/job/plugins/mpi/mpi.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

TEST_CASE("MpiPlugin: the master learns the worker hosts, every container the port",
          "[controllers][job][plugins]") {
  struct Case {
    std::vector<std::string> args;
    std::string master, worker;
    int64_t port;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "master", "worker", 22},
           {{"--master=launcher", "--worker=node", "--port=5000"}, "launcher", "node", 5000}}) {
    INFO(c.master);
    api::Job job = MakeJob("pi")
                       .Task(MakeTask(c.master).Replicas(1).Container("c").InitContainer("i"))
                       .Task(MakeTask(c.worker).Replicas(2).Container("c"))
                       .Build();
    auto plugin = NewMpiPlugin(c.args);
    REQUIRE(plugin.ok());
    json::Document master = PodWith(**plugin, job, c.master, 0);
    const std::string hosts = "pi-" + c.worker + "-0.pi,pi-" + c.worker + "-1.pi";
    for (const json::Value* ctr : Containers(master)) {
      CHECK(Env(*ctr, "MPI_HOST") == hosts);
      CHECK(PortNamed(*ctr, "mpijob-port") == c.port);
    }
    for (const json::Value* ctr : Containers(master, /*init=*/true)) {
      CHECK_FALSE(Env(*ctr, "MPI_HOST"));
      CHECK(PortNamed(*ctr, "mpijob-port") == c.port);
    }
    json::Document worker = PodWith(**plugin, job, c.worker, 1);
    for (const json::Value* ctr : Containers(worker)) {
      CHECK_FALSE(Env(*ctr, "MPI_HOST"));
      CHECK(PortNamed(*ctr, "mpijob-port") == c.port);
    }
    CHECK((*plugin)->OnJobAdd(job)->empty());
  }
}

TEST_CASE("MpiPlugin: an existing port is not duplicated", "[controllers][job][plugins]") {
  api::Job job =
      MakeJob("pi")
          .Task(MakeTask("master").Replicas(1).Container("c").SpecJson(
              "containers", R"([{"name": "c", "ports": [{"name": "ssh", "containerPort": 22}]}])"))
          .Build();
  auto plugin = NewMpiPlugin({});
  REQUIRE(plugin.ok());
  json::Document pod = PodWith(**plugin, job, "master", 0);
  CHECK(json::FindPath(pod, {"spec", "containers"})->GetArray()[0]["ports"].Size() == 1);
  CHECK(Env(*Containers(pod)[0], "MPI_HOST") == "");  // no worker task
}

}  // namespace
}  // namespace basalt::controllers
