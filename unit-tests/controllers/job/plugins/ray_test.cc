#include "controllers/job/plugins/ray/ray.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/util/status.h"
#include "unit-tests/controllers/job/plugins/pod_inspect.h"

namespace basalt::controllers {
namespace {

using namespace testing;

std::string Command(const json::Value& container) {
  const json::Value* cmd = json::Find(container, "command");
  if (cmd == nullptr || !cmd->IsArray()) return "";
  std::string out;
  for (const auto& part : cmd->GetArray()) {
    if (!out.empty()) out.push_back('|');
    out.append(json::AsView(part));
  }
  return out;
}

api::Job Job() {
  return MakeJob("rc")
      .Task(MakeTask("head").Replicas(1).Container("head").Container("sidecar"))
      .Task(MakeTask("worker").Replicas(2).Container("worker"))
      .Build();
}

TEST_CASE("RayPlugin: head ports and command, worker address", "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewRayPlugin({});
  REQUIRE(plugin.ok());
  json::Document head = PodWith(**plugin, job, "head", 0);
  const json::Value& hc = *Containers(head)[0];
  CHECK(PortNamed(hc, "gcs") == 6379);
  CHECK(PortNamed(hc, "dashboard") == 8265);
  CHECK(PortNamed(hc, "client-server") == 10001);
  CHECK(Command(hc) ==
        "sh|-c|ray start --head --block --dashboard-host=0.0.0.0 --port=6379 "
        "--dashboard-port=8265 --ray-client-server-port=10001");
  // Other containers of the head pod are left alone.
  CHECK(Command(*Containers(head)[1]).empty());
  CHECK(PortNamed(*Containers(head)[1], "gcs") == -1);

  json::Document worker = PodWith(**plugin, job, "worker", 1);
  CHECK(Command(*Containers(worker)[0]) == "sh|-c|ray start --block --address=rc-head-0.rc:6379");
  CHECK(PortNamed(*Containers(worker)[0], "gcs") == -1);
}

TEST_CASE("RayPlugin: the head Service and its deletion", "[controllers][job][plugins]") {
  const api::Job job = Job();
  auto plugin = NewRayPlugin({"--port=7000", "--dashboardPort=7001", "--clientPort=7002"});
  REQUIRE(plugin.ok());
  auto objects = (*plugin)->OnJobAdd(job);
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 1);
  const json::Document& svc = (*objects)[0];
  CHECK(json::GetString(svc, "kind") == "Service");
  CHECK(json::GetString(*json::Find(svc, "metadata"), "name") == "rc-head");
  const json::Value* sel = json::FindPath(svc, {"spec", "selector"});
  REQUIRE(sel != nullptr);
  CHECK(json::GetString(*sel, "volcano.sh/job-name") == "rc");
  CHECK(json::GetString(*sel, "volcano.sh/task-spec") == "head");
  const json::Value* ports = json::FindPath(svc, {"spec", "ports"});
  REQUIRE(ports != nullptr);
  REQUIRE(ports->Size() == 3);
  CHECK(json::GetString((*ports)[0], "name") == "gcs");
  CHECK(json::GetInt((*ports)[0], "port", 0) == 7000);
  CHECK(json::GetString((*ports)[0], "targetPort") == "gcs");
  CHECK(json::GetInt((*ports)[2], "port", 0) == 7002);
  std::vector<ObjectRef> refs = (*plugin)->OnJobDelete(job);
  REQUIRE(refs.size() == 1);
  CHECK(refs[0].name == "rc-head");
  CHECK(refs[0].kind == "Service");
}

TEST_CASE("RayPlugin: custom task and container names, no head task is an error",
          "[controllers][job][plugins]") {
  api::Job job = MakeJob("r2")
                     .Task(MakeTask("boss").Replicas(1).Container("main").Hostname("boss"))
                     .Task(MakeTask("crew").Replicas(1).Container("main"))
                     .Build();
  auto plugin = NewRayPlugin(
      {"--head=boss", "--headContainer=main", "--worker=crew", "--workerContainer=main"});
  REQUIRE(plugin.ok());
  json::Document crew = PodWith(**plugin, job, "crew", 0);
  CHECK(Command(*Containers(crew)[0]) == "sh|-c|ray start --block --address=boss.r2:6379");
  auto missing = NewRayPlugin({});
  REQUIRE(missing.ok());
  const api::TaskSpec* t = job.spec().FindTask("crew");
  auto pod = BuildPod(job, *t, 0);
  REQUIRE(pod.ok());
  absl::Status s = (*missing)->OnPodCreate(*pod, job, *t, 0);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(MessageOf(s) == "job r2 doesn't have head task head");
  CHECK_FALSE(NewRayPlugin({"--nope"}).ok());
}

}  // namespace
}  // namespace basalt::controllers
