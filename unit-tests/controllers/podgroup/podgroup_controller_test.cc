// The PodGroup controller: which pods get a PodGroup, what it looks like, and the calls made.

#include "controllers/podgroup/podgroup_controller.h"

#include <catch2/catch.hpp>

#include "common/api/time.h"
#include "common/util/clock.h"
#include "unit-tests/controllers/controller/fake_api.h"

namespace basalt::controllers {
namespace {

std::string Pod(std::string_view scheduler, std::string_view annotations = "{}",
                std::string_view owners = "[]") {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","namespace":"ns","uid":"pod-uid","resourceVersion":"3","annotations":{},"ownerReferences":{}}},)"
      R"("spec":{{"schedulerName":"{}","containers":[{{"name":"c","resources":{{"requests":{{"cpu":"500m"}}}}}}]}},"status":{{"phase":"Pending"}}}})",
      annotations, owners, scheduler);
}

const std::vector<std::string> kVolcano = {"volcano"};

TEST_CASE("PlanBarePodGroup: a bare volcano pod gets podgroup-<pod uid> owned by the pod",
          "[controllers][podgroup]") {
  json::Document pod = *json::Parse(Pod("volcano"));
  auto plan = PlanBarePodGroup(pod, kVolcano, {});
  REQUIRE(plan.has_value());
  CHECK(plan->name == "podgroup-pod-uid");
  json::Document pg = *json::Parse(plan->pod_group_json);
  CHECK(json::GetInt(*json::FindPath(pg, {"spec"}), "minMember") == 1);
  CHECK(json::AsView(*json::FindPath(pg, {"spec", "queue"})) == "default");
  CHECK(json::AsView(*json::FindPath(pg, {"spec", "minResources", "cpu"})) == "500m");
  const json::Value& owner = *json::FindPath(pg, {"metadata", "ownerReferences"})->Begin();
  CHECK(json::GetString(owner, "kind") == "Pod");
  CHECK(json::GetString(owner, "uid") == "pod-uid");
  CHECK(plan->pod_patch_json.find("podgroup-pod-uid") != std::string::npos);
}

TEST_CASE("PlanBarePodGroup: owned pods share their owner's PodGroup and its min-member",
          "[controllers][podgroup]") {
  json::Document pod = *json::Parse(Pod(
      "volcano", R"({"scheduling.volcano.sh/queue-name":"gpu"})",
      R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true}])"));
  auto plan = PlanBarePodGroup(pod, kVolcano, {{"scheduling.volcano.sh/group-min-member", "3"}});
  REQUIRE(plan.has_value());
  CHECK(plan->name == "podgroup-rs-uid");
  json::Document pg = *json::Parse(plan->pod_group_json);
  CHECK(json::GetInt(*json::FindPath(pg, {"spec"}), "minMember") == 3);
  CHECK(json::AsView(*json::FindPath(pg, {"spec", "queue"})) == "gpu");
  CHECK(json::AsView(*json::FindPath(pg, {"spec", "minResources", "cpu"})) == "1500m");
  CHECK(json::GetString(*json::FindPath(pg, {"metadata", "ownerReferences"})->Begin(), "uid") ==
        "rs-uid");
}

TEST_CASE("PlanBarePodGroup: other schedulers' pods and grouped pods are left alone",
          "[controllers][podgroup]") {
  CHECK_FALSE(PlanBarePodGroup(*json::Parse(Pod("default-scheduler")), kVolcano, {}));
  CHECK_FALSE(PlanBarePodGroup(
      *json::Parse(Pod("volcano", R"({"scheduling.k8s.io/group-name":"job"})")), kVolcano, {}));
}

TEST_CASE("ReconcileBarePod: creates the PodGroup, then annotates the pod",
          "[controllers][podgroup]") {
  testing::FakeApiServer api;
  informer::Store pods;
  testing::CacheObject(pods, Pod("volcano"));
  api.Put("/api/v1/namespaces/ns/pods/p", Pod("volcano"));
  REQUIRE(ReconcileBarePod(api.client(), pods, kVolcano, "ns/p").ok());
  CHECK(api.Has("/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/podgroup-pod-uid"));
  const auto patches = api.RequestsMatching("PATCH", "/api/v1/namespaces/ns/pods/p");
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].body.find("scheduling.k8s.io/group-name") != std::string::npos);
  // Again (the cache has not seen the annotation): AlreadyExists is fine.
  REQUIRE(ReconcileBarePod(api.client(), pods, kVolcano, "ns/p").ok());
}

}  // namespace
}  // namespace basalt::controllers

namespace basalt::controllers {
namespace {

TEST_CASE(
    "PlanBarePodGroup: with bare-pod-podgroups false, bare pods declaring no gang get none; "
    "owned pods and pods with group-min-member still do",
    "[controllers][podgroup]") {
  const std::string rs =
      R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true}])";
  CHECK_FALSE(PlanBarePodGroup(*json::Parse(Pod("volcano")), kVolcano, {}, false));
  // A non-controller owner does not make the pod owned.
  CHECK_FALSE(PlanBarePodGroup(
      *json::Parse(Pod(
          "volcano", "{}",
          R"([{"apiVersion":"v1","kind":"ConfigMap","name":"c","uid":"c-uid","controller":false}])")),
      kVolcano, {}, false));
  auto owned = PlanBarePodGroup(*json::Parse(Pod("volcano", "{}", rs)), kVolcano, {}, false);
  REQUIRE(owned.has_value());
  CHECK(owned->name == "podgroup-rs-uid");
  auto gang = PlanBarePodGroup(
      *json::Parse(Pod("volcano", R"({"scheduling.volcano.sh/group-min-member":"2"})")), kVolcano,
      {}, false);
  REQUIRE(gang.has_value());
  CHECK(gang->name == "podgroup-pod-uid");
  // The default (true) is Volcano's behaviour.
  CHECK(PlanBarePodGroup(*json::Parse(Pod("volcano")), kVolcano, {}, true).has_value());
}

TEST_CASE("ReconcileBarePod: with bare-pod-podgroups false a bare pod costs no request",
          "[controllers][podgroup]") {
  testing::FakeApiServer api;
  informer::Store pods;
  testing::CacheObject(pods, Pod("volcano"));
  api.Put("/api/v1/namespaces/ns/pods/p", Pod("volcano"));
  REQUIRE(ReconcileBarePod(api.client(), pods, kVolcano, "ns/p", false).ok());
  CHECK_FALSE(
      api.Has("/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/podgroup-pod-uid"));
  CHECK(api.RequestsMatching("PATCH", "/api/v1/namespaces/ns/pods/p").empty());
  CHECK(api.RequestsMatching("POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups")
            .empty());
}

}  // namespace
}  // namespace basalt::controllers

namespace basalt::controllers {
namespace {

constexpr char kPodGroupsPath[] = "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups";
constexpr char kPodPath[] = "/api/v1/namespaces/ns/pods/p";

// A bare pod created at `created`, with `node` ("" = unbound), the annotations and the
// PodScheduled status ("" = no condition).
std::string BarePod(Clock::SystemTimePoint created, std::string_view node = "",
                    std::string_view annotations = "{}", std::string_view scheduled = "") {
  std::string conditions =
      scheduled.empty()
          ? ""
          : fmt::format(R"(,"conditions":[{{"type":"PodScheduled","status":"{}"}}])", scheduled);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","namespace":"ns","uid":"pod-uid",)"
      R"("resourceVersion":"3","creationTimestamp":"{}","annotations":{}}},)"
      R"("spec":{{"schedulerName":"volcano","nodeName":"{}","containers":[{{"name":"c"}}]}},)"
      R"("status":{{"phase":"Pending"{}}}}})",
      api::FormatRfc3339(std::chrono::time_point_cast<std::chrono::seconds>(created)), annotations,
      node, conditions);
}

TEST_CASE(
    "ReconcileBarePod: a new bare pod gets its PodGroup only once bound, the annotation from "
    "the binding, and no second POST",
    "[controllers][podgroup]") {
  FakeClock clock;
  testing::FakeApiServer api;
  informer::Store pods;
  informer::Store pod_groups;
  CreatedPodGroups created;
  const BarePodWait wait{.pod_groups = &pod_groups, .created = &created, .clock = &clock};
  const Clock::SystemTimePoint t0 = clock.WallNow();

  // Unbound and 0 s old: nothing yet, look again before the unbound wait is over.
  testing::CacheObject(pods, BarePod(t0));
  auto r = ReconcileBarePod(api.client(), pods, kVolcano, "ns/p", true, wait);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK(**r > std::chrono::seconds(8));
  CHECK(**r <= std::chrono::seconds(10));
  CHECK(api.RequestsMatching("POST", kPodGroupsPath).empty());

  // Bound by the scheduler with the annotation on the binding: one POST, no PATCH.
  clock.Advance(std::chrono::seconds(1));
  const std::string bound =
      BarePod(t0, "n1", R"({"scheduling.k8s.io/group-name":"podgroup-pod-uid"})");
  testing::CacheObject(pods, bound);
  api.Put(kPodPath, bound);
  r = ReconcileBarePod(api.client(), pods, kVolcano, "ns/p", true, wait);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  CHECK(api.Has(std::string(kPodGroupsPath) + "/podgroup-pod-uid"));
  CHECK(api.RequestsMatching("POST", kPodGroupsPath).size() == 1);
  CHECK(api.RequestsMatching("PATCH", kPodPath).empty());
  // The pod changes again (Running) before the informer shows the PodGroup: no second POST.
  r = ReconcileBarePod(api.client(), pods, kVolcano, "ns/p", true, wait);
  REQUIRE(r.ok());
  CHECK(api.RequestsMatching("POST", kPodGroupsPath).size() == 1);
}

TEST_CASE(
    "ReconcileBarePod: an unschedulable bare pod, or one unbound for the whole wait, gets its "
    "PodGroup and the annotation",
    "[controllers][podgroup]") {
  FakeClock clock;
  informer::Store pod_groups;
  const Clock::SystemTimePoint t0 = clock.WallNow();
  auto check_made = [&](const std::string& pod) {
    testing::FakeApiServer api;
    informer::Store pods;
    testing::CacheObject(pods, pod);
    api.Put(kPodPath, pod);
    auto r = ReconcileBarePod(api.client(), pods, kVolcano, "ns/p", true,
                              BarePodWait{.pod_groups = &pod_groups, .clock = &clock});
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    CHECK(api.Has(std::string(kPodGroupsPath) + "/podgroup-pod-uid"));
    const auto patches = api.RequestsMatching("PATCH", kPodPath);
    REQUIRE(patches.size() == 1);
    CHECK(patches[0].body.find("podgroup-pod-uid") != std::string::npos);
  };
  SECTION("PodScheduled=False") { check_made(BarePod(t0, "", "{}", "False")); }
  SECTION("unbound for 10 s") {
    clock.Advance(std::chrono::seconds(10));
    check_made(BarePod(t0));
  }
}

TEST_CASE("ReconcileBarePod: a PodGroup the informer shows is not created again",
          "[controllers][podgroup]") {
  FakeClock clock;
  testing::FakeApiServer api;
  informer::Store pods;
  informer::Store pod_groups;
  testing::CacheObject(
      pod_groups, R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
                  R"({"name":"podgroup-pod-uid","namespace":"ns","resourceVersion":"5"}})");
  // Bound without the annotation (vc-scheduler --bare-pod-podgroups=false): the PATCH alone.
  const std::string pod = BarePod(clock.WallNow(), "n1");
  testing::CacheObject(pods, pod);
  api.Put(kPodPath, pod);
  auto r = ReconcileBarePod(api.client(), pods, kVolcano, "ns/p", true,
                            BarePodWait{.pod_groups = &pod_groups, .clock = &clock});
  REQUIRE(r.ok());
  CHECK(api.RequestsMatching("POST", kPodGroupsPath).empty());
  CHECK(api.RequestsMatching("PATCH", kPodPath).size() == 1);
}

}  // namespace
}  // namespace basalt::controllers
