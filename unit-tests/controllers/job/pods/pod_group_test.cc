#include "controllers/job/pods/pod_group.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/api/vocabulary.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::JobBuilder;
using testing::MakeJob;
using testing::MakeTask;
using testing::StringAt;
using testing::TaskBuilder;

TEST_CASE("PodGroup: named after the job, owned by it, labelled with its name",
          "[controllers][job][pods]") {
  api::Job job =
      MakeJob("bert")
          .Namespace("ml")
          .Uid("uid-7")
          .Queue("research")
          .PriorityClass("high")
          .MinAvailable(3)
          .Label("team", "nlp")
          .Annotation("a", "b")
          .Task(MakeTask("master").Replicas(1).Container("m").Request("cpu", "1"))
          .Task(MakeTask("worker").Replicas(4).MinAvailable(2).Container("w").Request("cpu", "2"))
          .NetworkTopology("hard", 1)
          .Build();
  auto pg = BuildPodGroup(job, {});
  REQUIRE(pg.ok());
  CHECK(StringAt(*pg, {"apiVersion"}) == "scheduling.volcano.sh/v1beta1");
  CHECK(StringAt(*pg, {"kind"}) == "PodGroup");
  CHECK(StringAt(*pg, {"metadata", "name"}) == "bert");
  CHECK(StringAt(*pg, {"metadata", "namespace"}) == "ml");
  CHECK(StringAt(*pg, {"metadata", "labels", api::kJobNameKey}) == "bert");
  CHECK(StringAt(*pg, {"metadata", "labels", "team"}) == "nlp");
  CHECK(StringAt(*pg, {"metadata", "annotations", "a"}) == "b");
  const json::Value& owner = (*json::FindPath(*pg, {"metadata", "ownerReferences"}))[0];
  CHECK(json::GetString(owner, "kind") == "Job");
  CHECK(json::GetString(owner, "uid") == "uid-7");
  CHECK(json::GetBool(owner, "controller"));
  CHECK(json::GetBool(owner, "blockOwnerDeletion"));
  CHECK(PodGroupOwnedBy(*pg, "uid-7"));
  CHECK_FALSE(PodGroupOwnedBy(*pg, "uid-6"));

  const json::Value& spec = *json::Find(*pg, "spec");
  CHECK(json::GetInt(spec, "minMember") == 3);
  CHECK(json::GetInt(*json::Find(spec, "minTaskMember"), "master") == 1);
  CHECK(json::GetInt(*json::Find(spec, "minTaskMember"), "worker") == 2);
  CHECK(json::GetString(spec, "queue") == "research");
  CHECK(json::GetString(spec, "priorityClassName") == "high");
  CHECK(StringAt(spec, {"networkTopology", "mode"}) == "hard");
  CHECK(json::GetInt(*json::Find(spec, "networkTopology"), "highestTierAllowed") == 1);
  // master 1 cpu + 2 workers x 2 cpu.
  CHECK(StringAt(spec, {"minResources", "cpu"}) == "5");
  CHECK(StringAt(spec, {"minResources", "pods"}) == "3");
  CHECK(StringAt(*pg, {"status", "phase"}) == "Pending");
}

TEST_CASE("PodGroup: partitioned tasks get sub-group policies", "[controllers][job][pods]") {
  // `w` with minPartitions `w_min` and minAvailable `w_min_available`.
  auto make = [](int32_t w_min, std::optional<int32_t> w_min_available) {
    TaskBuilder w = MakeTask("w").Replicas(8).Partitions(4, 2, w_min);
    w.PartitionNetworkTopology("hard", 1);
    if (w_min_available) w.MinAvailable(*w_min_available);
    return MakeJob("j")
        .MinAvailable(5)
        .Task(MakeTask("master").Replicas(1))
        .Task(w)
        .Task(MakeTask("x").Replicas(4).MinAvailable(3).Partitions(2, 2))
        .Build();
  };
  api::Job job = make(2, std::nullopt);
  CHECK(MinTaskMember(job.spec()) ==
        std::map<std::string, int32_t>{{"master", 1}, {"w", 4}, {"x", 3}});
  auto pg = BuildPodGroup(job, {});
  REQUIRE(pg.ok());
  CHECK(json::Serialize(*json::FindPath(*pg, {"spec", "subGroupPolicy"})) ==
        R"([{"name":"w","subGroupSize":2,"minSubGroups":2,)"
        R"("labelSelector":{"matchLabels":{"volcano.sh/task-spec":"w"}},)"
        R"("matchLabelKeys":["volcano.sh/partition-id"],)"
        R"("networkTopology":{"mode":"hard","highestTierAllowed":1}},)"
        R"({"name":"x","subGroupSize":2,"minSubGroups":0,)"
        R"("labelSelector":{"matchLabels":{"volcano.sh/task-spec":"x"}},)"
        R"("matchLabelKeys":["volcano.sh/partition-id"]}])");
  // minAvailable 4 keeps minTaskMember equal: only the policy differs.
  api::Job other = make(3, 4);
  CHECK(PodGroupSpecDiffers(*pg, *BuildPodGroup(other, {})));
  api::Job plain = MakeJob("j").MinAvailable(1).Task(MakeTask("t").Replicas(1)).Build();
  auto plain_pg = BuildPodGroup(plain, {});
  CHECK(json::FindPath(*plain_pg, {"spec", "subGroupPolicy"}) == nullptr);
  CHECK(PodGroupSpecDiffers(*plain_pg, *pg));
}

TEST_CASE("PodGroup: pod quota usage follows the Kubernetes pod evaluator",
          "[controllers][job][pods]") {
  auto spec = json::Parse(R"({
    "containers": [
      {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi",
                                               "nvidia.com/gpu": "1", "hugepages-2Mi": "4Mi"},
                                  "limits": {"cpu": "1", "nvidia.com/gpu": "1"}}},
      {"name": "b", "resources": {"requests": {"cpu": "250m", "ephemeral-storage": "1G"}}}],
    "initContainers": [
      {"name": "i", "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}],
    "overhead": {"cpu": "100m"}})");
  REQUIRE(spec.ok());
  auto usage = PodQuotaUsage(*spec);
  REQUIRE(usage.ok());
  CHECK(usage->ToJsonString() ==
        R"({"count/pods":"1","cpu":"2100m","ephemeral-storage":"1G","hugepages-2Mi":"4Mi",)"
        R"("limits.cpu":"1100m","memory":"1Gi","nvidia.com/gpu":"1","pods":"1",)"
        R"("requests.cpu":"2100m","requests.ephemeral-storage":"1G",)"
        R"("requests.hugepages-2Mi":"4Mi","requests.memory":"1Gi","requests.nvidia.com/gpu":"1"})");

  auto bad = json::Parse(R"({"containers": [{"resources": {"requests": {"cpu": "lots"}}}]})");
  CHECK_FALSE(PodQuotaUsage(*bad).ok());
}

TEST_CASE("PodGroup: a limit without a request counts as the request, sidecars add up",
          "[controllers][job][pods]") {
  auto spec = json::Parse(R"({
    "initContainers": [
      {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
      {"name": "setup", "resources": {"requests": {"cpu": "1"}}}],
    "containers": [
      {"name": "train", "resources": {"limits": {"nvidia.com/gpu": "2", "memory": "4Gi"}}}]})");
  REQUIRE(spec.ok());
  auto usage = PodQuotaUsage(*spec);
  REQUIRE(usage.ok());
  CHECK(usage->Get("nvidia.com/gpu") == resource::MustParse("2"));
  CHECK(usage->Get("requests.nvidia.com/gpu") == resource::MustParse("2"));
  CHECK(usage->Get("memory") == resource::MustParse("4Gi"));
  CHECK(usage->Get("limits.memory") == resource::MustParse("4Gi"));
  // max(steady 100m sidecar, setup 1 + sidecar 100m) = 1100m.
  CHECK(usage->Get("cpu") == resource::MustParse("1100m"));
}

api::JobSpec PrioritySpec(int32_t min_available, std::optional<int32_t> worker_min) {
  JobBuilder b = MakeJob("j");
  b.MinAvailable(min_available);
  b.Task(MakeTask("low").Replicas(2).MinAvailable(1).PriorityClass("p-low").Container("c").Request(
      "cpu", "1"));
  TaskBuilder worker =
      MakeTask("high").Replicas(3).PriorityClass("p-high").Container("c").Request("cpu", "10");
  if (worker_min) worker.MinAvailable(*worker_min);
  b.Task(worker);
  return b.Build().spec();
}

TEST_CASE("PodGroup: minResources walks tasks by priority", "[controllers][job][pods]") {
  const PriorityClassValues priorities = {{"p-high", 1000}, {"p-low", 10}};
  struct Case {
    std::string name;
    api::JobSpec spec;
    PriorityClassValues priorities;
    int64_t cpu_milli;
    int64_t pods;
  };
  const std::vector<Case> cases = {
      // Σ task minAvailable = 1 + 3 = 4 > minAvailable 2: first 2 pods in priority order.
      {"minAvailable below task minimums: highest priority first", PrioritySpec(2, std::nullopt),
       priorities, 20000, 2},
      {"without priorities: spec order", PrioritySpec(2, std::nullopt), {}, 2000, 2},
      // Σ = 1 + 1 = 2 <= minAvailable 4: each task's minimum, then top up high first.
      {"task minimums then top-up by priority", PrioritySpec(4, 1), priorities, 31000, 4},
      {"top-up spills to lower priority", PrioritySpec(5, 1), priorities, 32000, 5},
      {"minAvailable 0: nothing", PrioritySpec(0, 1), priorities, 0, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto r = MinResources(c.spec, c.priorities);
    REQUIRE(r.ok());
    CHECK(r->Get("cpu").MilliValue() == c.cpu_milli);
    CHECK(r->Get("pods").Value() == c.pods);
  }
}

TEST_CASE("PodGroup: spec differences that require an update", "[controllers][job][pods]") {
  // The job with job minAvailable `min`, `replicas` and task minAvailable `task_min`.
  auto make = [](int32_t min, int32_t replicas, std::optional<int32_t> task_min = {}) {
    TaskBuilder t = MakeTask("t").Replicas(replicas).Container("c").Request("memory", "1Gi");
    if (task_min) t.MinAvailable(*task_min);
    return MakeJob("j").MinAvailable(min).Task(t);
  };
  api::Job job = make(2, 2).Build();
  auto desired = BuildPodGroup(job, {});
  REQUIRE(desired.ok());
  CHECK_FALSE(PodGroupSpecDiffers(*desired, *desired));
  // The same quantity written differently is no difference.
  auto same = json::Parse(json::Serialize(*desired));
  json::Set(*json::FindMutable(*json::FindMutable(*same, "spec"), "minResources"), "memory",
            json::MakeString("2Gi", same->GetAllocator()), same->GetAllocator());
  CHECK_FALSE(PodGroupSpecDiffers(*same, *desired));

  api::Job scaled = make(3, 3).Build();
  CHECK(PodGroupSpecDiffers(*desired, *BuildPodGroup(scaled, {})));
  api::Job task_min = make(2, 2, 1).Build();
  CHECK(PodGroupSpecDiffers(*desired, *BuildPodGroup(task_min, {})));
  api::Job prio = make(2, 2).PriorityClass("high").Build();
  CHECK(PodGroupSpecDiffers(*desired, *BuildPodGroup(prio, {})));
}

}  // namespace
}  // namespace basalt::controllers
