#include "common/api/views.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/api/batch.h"
#include "common/api/core.h"
#include "common/api/scheduling.h"
#include "common/util/json.h"

namespace {

namespace view = basalt::api::view;
using basalt::api::Command;
using basalt::api::Job;
using basalt::api::PodGroup;
using basalt::api::PriorityClass;

basalt::json::Document Doc(std::string_view text) {
  auto doc = basalt::json::Parse(text);
  REQUIRE(doc.ok());
  return std::move(*doc);
}

constexpr std::string_view kJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
  "metadata": {"name": "j1", "namespace": "ns", "uid": "u-1", "resourceVersion": "42",
               "annotations": {"volcano.sh/job-name": "j1"}},
  "spec": {"queue": "team-a", "minAvailable": 1,
           "tasks": [{"name": "w", "replicas": 1, "template": {"spec": {}}}]},
  "status": {"state": {"phase": "Running"}}})";

TEST_CASE("views: Job fields read as the typed Job decodes them", "[api][views]") {
  const basalt::json::Document doc = Doc(kJob);
  absl::StatusOr<Job> job = Job::Parse(kJob);
  REQUIRE(job.ok());
  CHECK(view::JobQueue(doc) == job->spec().queue);
  CHECK(view::JobPhase(doc) == job->status().state.phase);
  CHECK(view::Uid(doc) == job->uid());
  CHECK(view::Name(doc) == job->name());
  CHECK(view::Namespace(doc) == job->namespace_name());
  CHECK(view::ResourceVersion(doc) == job->resource_version());
  CHECK(view::ApiVersion(doc) == job->api_version());
  CHECK(view::Kind(doc) == job->kind());
  CHECK(view::Annotation(doc, "volcano.sh/job-name") == "j1");
  CHECK(view::Annotation(doc, "absent").empty());

  // The CRD default: an absent or empty queue is "default", as the decoder reads it.
  for (std::string_view text : {R"({"spec": {}})", R"({"spec": {"queue": ""}})", R"({})"}) {
    CHECK(view::JobQueue(Doc(text)) == "default");
  }
}

TEST_CASE("views: PodGroup phase, conditions and controller owner", "[api][views]") {
  constexpr std::string_view kPg = R"({
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "j1-u-1", "namespace": "ns",
                 "ownerReferences": [
                   {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "c", "controller": false},
                   {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j1",
                    "uid": "u-1", "controller": true}]},
    "spec": {"minMember": 1},
    "status": {"phase": "Inqueue", "conditions": [{"type": "Unschedulable", "status": "True"}]}})";
  const basalt::json::Document doc = Doc(kPg);
  absl::StatusOr<PodGroup> pg = PodGroup::Parse(kPg);
  REQUIRE(pg.ok());
  CHECK(view::PodGroupPhase(doc) == pg->status().phase);
  CHECK(view::ControllerName(doc, "Job") == std::optional<std::string_view>("j1"));
  CHECK(view::ControllerName(doc, "ConfigMap") == std::nullopt);  // not the controller
  CHECK(view::ControlledBy(doc, "Job", "u-1"));
  CHECK_FALSE(view::ControlledBy(doc, "Job", "u-2"));

  CHECK(view::SamePodGroupConditions(doc, Doc(kPg)));
  CHECK_FALSE(view::SamePodGroupConditions(doc, Doc(R"({"status": {"phase": "Inqueue"}})")));
  CHECK(view::SamePodGroupConditions(Doc(R"({"status": {}})"), Doc(R"({})")));
  CHECK(view::SameSpec(doc, Doc(R"({"spec": {"minMember": 1}})")));
  CHECK_FALSE(view::SameSpec(doc, Doc(R"({"spec": {"minMember": 2}})")));
  CHECK_FALSE(view::SameSpec(doc, Doc(R"({})")));
}

TEST_CASE("views: Command action and target as the typed Command decodes them", "[api][views]") {
  constexpr std::string_view kCmd = R"({
    "apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
    "metadata": {"name": "c1", "namespace": "ns", "uid": "cu"},
    "action": "AbortJob",
    "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j1",
               "uid": "u-1"}})";
  const basalt::json::Document doc = Doc(kCmd);
  absl::StatusOr<Command> cmd = Command::Parse(kCmd);
  REQUIRE(cmd.ok());
  REQUIRE(cmd->target().has_value());
  CHECK(view::CommandAction(doc) == cmd->action());
  const view::CommandTarget t = view::CommandTargetOf(doc);
  CHECK(t.present);
  CHECK(t.api_version == cmd->target()->api_version);
  CHECK(t.kind == cmd->target()->kind);
  CHECK(t.name == cmd->target()->name);
  CHECK(t.uid == cmd->target()->uid);
  CHECK_FALSE(view::CommandTargetOf(Doc(R"({"action": "AbortJob"})")).present);
}

TEST_CASE("views: PodGroup spec diff covers the fields the job controller owns", "[api][views]") {
  const basalt::json::Document base = Doc(
      R"({"spec": {"minMember": 2, "minTaskMember": {"w": 2},
                   "minResources": {"cpu": "1", "memory": "1Gi"}}})");
  CHECK_FALSE(view::PodGroupSpecDiffers(base, base));
  // Quantities compare by value, not by spelling.
  CHECK_FALSE(
      view::PodGroupSpecDiffers(base, Doc(R"({"spec": {"minMember": 2, "minTaskMember": {"w": 2},
                             "minResources": {"cpu": "1000m", "memory": "1024Mi"}}})")));
  CHECK(view::PodGroupSpecDiffers(base, Doc(R"({"spec": {"minMember": 3, "minTaskMember": {"w": 2},
                             "minResources": {"cpu": "1", "memory": "1Gi"}}})")));
  CHECK(view::PodGroupSpecDiffers(base, Doc(R"({"spec": {"minMember": 2, "minTaskMember": {"w": 1},
                             "minResources": {"cpu": "1", "memory": "1Gi"}}})")));
  CHECK(view::PodGroupSpecDiffers(base, Doc(R"({"spec": {"minMember": 2, "minTaskMember": {"w": 2},
                             "minResources": {"cpu": "1", "memory": "1Gi"},
                             "subGroupPolicy": [{"subGroupSize": 2}]}})")));
}

TEST_CASE("views: PriorityClass value as the typed PriorityClass decodes it", "[api][views]") {
  constexpr std::string_view kPc = R"({"apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000})";
  absl::StatusOr<PriorityClass> pc = PriorityClass::Parse(kPc);
  REQUIRE(pc.ok());
  CHECK(view::PriorityClassValue(Doc(kPc)) == pc->value());
}

}  // namespace
