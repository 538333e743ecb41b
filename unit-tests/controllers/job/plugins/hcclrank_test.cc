#include "controllers/job/plugins/hcclrank/hcclrank.h"

#include <catch2/catch.hpp>
#include <string>

#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

std::string Rank(const json::Document& pod) {
  const json::Value* a = json::FindPath(pod, {"metadata", "annotations"});
  return a == nullptr ? "" : std::string(json::GetString(*a, "hccl/rankIndex"));
}

TEST_CASE("HcclRankPlugin: global ranks, masters first", "[controllers][job][plugins]") {
  const api::Job job = MakeJob("h")
                           .Task(MakeTask("master").Replicas(2).Container("c"))
                           .Task(MakeTask("worker").Replicas(3).Container("c"))
                           .Task(MakeTask("other").Replicas(1).Container("c"))
                           .Build();
  auto plugin = NewHcclRankPlugin({});
  REQUIRE(plugin.ok());
  CHECK(Rank(PodWith(**plugin, job, "master", 0)) == "0");
  CHECK(Rank(PodWith(**plugin, job, "master", 1)) == "1");
  CHECK(Rank(PodWith(**plugin, job, "worker", 0)) == "2");
  CHECK(Rank(PodWith(**plugin, job, "worker", 2)) == "4");
  CHECK(Rank(PodWith(**plugin, job, "other", 0)).empty());
  auto objects = (*plugin)->OnJobAdd(job);
  REQUIRE(objects.ok());
  CHECK(objects->empty());
  CHECK((*plugin)->OnJobDelete(job).empty());
}

TEST_CASE("HcclRankPlugin: a RANK env or an existing annotation wins, custom task names",
          "[controllers][job][plugins]") {
  const api::Job job =
      MakeJob("h")
          .Task(MakeTask("lead").Replicas(1).Container("c"))
          .Task(MakeTask("w").Replicas(2).Container("c").TemplateAnnotation("hccl/rankIndex", "7"))
          .Build();
  auto plugin = NewHcclRankPlugin({"--master=lead", "--worker=w"});
  REQUIRE(plugin.ok());
  CHECK(Rank(PodWith(**plugin, job, "lead", 0)) == "0");
  CHECK(Rank(PodWith(**plugin, job, "w", 1)) == "7");

  const api::TaskSpec* t = job.spec().FindTask("lead");
  auto pod = BuildPod(job, *t, 0);
  REQUIRE(pod.ok());
  json::Value& c = (*json::FindMutable(*json::FindMutable(*pod, "spec"), "containers"))[0];
  AddEnv(c, "RANK", "5", pod->GetAllocator());
  REQUIRE((*plugin)->OnPodCreate(*pod, job, *t, 0).ok());
  CHECK(Rank(*pod) == "5");
  CHECK_FALSE(NewHcclRankPlugin({"--port=1"}).ok());
}

}  // namespace
}  // namespace basalt::controllers
