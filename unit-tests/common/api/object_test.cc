#include "common/api/object.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "common/api/codec.h"
#include "common/api/time.h"
#include "common/util/json.h"
#include "common/util/status.h"

namespace {

using basalt::MessageOf;
using basalt::api::Object;
using basalt::api::OwnerReference;

// Re-serializes JSON text so two texts compare independent of whitespace.
std::string Normalize(std::string_view text) {
  auto doc = basalt::json::Parse(text);
  REQUIRE(doc.ok());
  return basalt::json::Serialize(*doc);
}

constexpr std::string_view kObject = R"({
  "apiVersion": "example.com/v1",
  "kind": "Widget",
  "metadata": {
    "name": "w1",
    "namespace": "team-a",
    "uid": "1111-2222",
    "resourceVersion": "42",
    "generation": 7,
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "deletionTimestamp": "2024-05-01T11:00:00Z",
    "labels": {"app": "w", "tier": "batch"},
    "annotations": {"note": "keep me"},
    "finalizers": ["example.com/cleanup"],
    "ownerReferences": [
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u-cm"},
      {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u-j",
       "controller": true, "blockOwnerDeletion": true}
    ],
    "managedFields": [{"manager": "kubectl", "operation": "Apply"}]
  },
  "spec": {"unknownNumber": 1.25, "nested": {"deep": [1, "two", null, true]}},
  "extra": "top-level unknown"
})";

}  // namespace

TEST_CASE("Object: ToJson re-encodes every field, known or not", "[api][object]") {
  auto obj = Object::Parse(kObject);
  REQUIRE(obj.ok());
  CHECK(obj->ToJson() == Normalize(kObject));
}

TEST_CASE("Object: ObjectMeta accessors read the metadata", "[api][object]") {
  auto obj = Object::Parse(kObject);
  REQUIRE(obj.ok());
  CHECK(obj->api_version() == "example.com/v1");
  CHECK(obj->kind() == "Widget");
  CHECK(obj->name() == "w1");
  CHECK(obj->namespace_name() == "team-a");
  CHECK(obj->uid() == "1111-2222");
  CHECK(obj->resource_version() == "42");
  CHECK(obj->generation() == 7);
  CHECK(obj->Key() == "team-a/w1");
  CHECK(obj->labels().size() == 2);
  CHECK(obj->label("tier") == "batch");
  CHECK_FALSE(obj->label("missing").has_value());
  CHECK(obj->annotation("note") == "keep me");
  CHECK(obj->finalizers() == std::vector<std::string>{"example.com/cleanup"});
  REQUIRE(obj->owner_references().size() == 2);
  auto ctrl = obj->controller_ref();
  REQUIRE(ctrl.has_value());
  CHECK(ctrl->kind == "Job");
  CHECK(ctrl->uid == "u-j");
  CHECK(ctrl->block_owner_deletion);
  REQUIRE(obj->creation_timestamp().has_value());
  CHECK(basalt::api::FormatRfc3339(*obj->creation_timestamp()) == "2024-05-01T10:00:00Z");
  CHECK(basalt::api::FormatRfc3339(*obj->deletion_timestamp()) == "2024-05-01T11:00:00Z");
}

TEST_CASE("Object: absent metadata reads as empty", "[api][object]") {
  auto obj = Object::Parse(R"({"kind":"X"})");
  REQUIRE(obj.ok());
  CHECK(obj->name().empty());
  CHECK(obj->labels().empty());
  CHECK(obj->owner_references().empty());
  CHECK_FALSE(obj->creation_timestamp().has_value());
  CHECK(obj->generation() == 0);
}

TEST_CASE("Object: setters edit in place and keep unknown fields", "[api][object]") {
  auto obj = Object::Parse(kObject);
  REQUIRE(obj.ok());
  obj->SetLabel("tier", "online");
  obj->SetLabel("new", "yes");
  obj->RemoveLabel("app");
  obj->SetAnnotation("scheduling.k8s.io/group-name", "pg");
  obj->AddOwnerReference(OwnerReference{"v1", "ConfigMap", "cm2", "u-cm", false, false});
  obj->SetFinalizers({});
  auto doc = basalt::json::Parse(obj->ToJson());
  REQUIRE(doc.ok());
  // Unknown fields are untouched.
  CHECK(basalt::json::Serialize(*basalt::json::Find(*doc, "spec")) ==
        R"({"unknownNumber":1.25,"nested":{"deep":[1,"two",null,true]}})");
  CHECK(basalt::json::GetString(*doc, "extra") == "top-level unknown");
  CHECK(basalt::json::FindPath(*doc, {"metadata", "managedFields"}) != nullptr);
  // Edits are visible through the accessors.
  CHECK(obj->labels() == basalt::api::StringMap{{"new", "yes"}, {"tier", "online"}});
  CHECK(obj->annotation("scheduling.k8s.io/group-name") == "pg");
  REQUIRE(obj->owner_references().size() == 2);
  CHECK(obj->owner_references()[0].name == "cm2");  // replaced by uid, order kept
  CHECK(obj->finalizers().empty());
}

TEST_CASE("Object: setters create metadata on an empty object", "[api][object]") {
  Object obj;
  obj.SetApiVersionKind("v1", "ConfigMap");
  obj.SetName("cm");
  obj.SetNamespace("ns");
  obj.SetLabel("a", "b");
  CHECK(obj.ToJson() ==
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns",)"
        R"("labels":{"a":"b"}}})");
}

TEST_CASE("ControllerRef: controller and blockOwnerDeletion set, owner fields copied",
          "[api][object]") {
  const OwnerReference ref =
      basalt::api::ControllerRef("flow.volcano.sh/v1alpha1", "JobFlow", "etl", "u-flow");
  CHECK(ref == OwnerReference{"flow.volcano.sh/v1alpha1", "JobFlow", "etl", "u-flow", true, true});

  // Encoded, it is what an API server and a garbage collector read as the controller.
  basalt::json::Document d;
  d.SetObject();
  const basalt::json::Value v = basalt::api::EncodeOwnerReference(ref, d.GetAllocator());
  CHECK(basalt::json::Serialize(v) ==
        R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","name":"etl",)"
        R"("uid":"u-flow","controller":true,"blockOwnerDeletion":true})");

  // On an object, controller_ref() finds it among other owners.
  Object obj;
  obj.AddOwnerReference(OwnerReference{"v1", "ConfigMap", "cm", "u-cm", false, false});
  obj.AddOwnerReference(ref);
  const std::optional<OwnerReference> found = obj.controller_ref();
  REQUIRE(found.has_value());
  CHECK(*found == ref);
}

TEST_CASE("Object: copies are deep and independent", "[api][object]") {
  auto obj = Object::Parse(kObject);
  REQUIRE(obj.ok());
  Object copy = *obj;
  copy.SetLabel("tier", "changed");
  CHECK(obj->label("tier") == "batch");
  CHECK(copy.label("tier") == "changed");
  Object assigned;
  assigned = copy;
  CHECK(assigned.label("tier") == "changed");
}

TEST_CASE("Object: SetPath writes status sub-objects", "[api][object]") {
  auto obj = Object::Parse(R"({"status":{"keep":1}})");
  REQUIRE(obj.ok());
  auto v = basalt::json::Parse(R"({"a":[1,2]})");
  REQUIRE(v.ok());
  obj->SetPath({"status", "sub"}, *v);
  CHECK(obj->ToJson() == R"({"status":{"keep":1,"sub":{"a":[1,2]}}})");
}

TEST_CASE("Object: malformed input gives a clear error", "[api][object]") {
  auto bad = Object::Parse(R"({"metadata": )");
  REQUIRE_FALSE(bad.ok());
  CHECK(MessageOf(bad.status()).find("invalid JSON") != std::string_view::npos);
  auto arr = Object::Parse("[1,2]");
  REQUIRE_FALSE(arr.ok());
  CHECK(MessageOf(arr.status()) == "a Kubernetes object must be a JSON object");
}

TEST_CASE("Object: CopyOf takes one list item into its own document", "[api][object]") {
  std::optional<Object> item;
  {
    auto list = basalt::json::Parse(
        R"({"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
    REQUIRE(list.ok());
    const auto* items = basalt::json::Find(*list, "items");
    auto copy = Object::CopyOf((*items)[1]);
    REQUIRE(copy.ok());
    item = *std::move(copy);
    CHECK_FALSE(Object::CopyOf(*basalt::json::Find(*list, "kind")).ok());
  }  // the list document is gone; the copy stays valid
  CHECK(item->name() == "b");
  CHECK(item->ToJson() == R"({"metadata":{"name":"b"}})");
}

TEST_CASE("FieldReader reports the path and list position of what it reads") {
  auto doc = basalt::json::Parse(
      R"({"spec": {"queue": null, "tasks": [{"name": "a"}, 3, {"name": "c", "n": 1}]}})");
  REQUIRE(doc.ok());
  basalt::api::FieldReader root(&*doc, "");
  basalt::api::FieldReader spec = root.Child("spec");
  CHECK(root.index() == -1);
  CHECK(spec.path() == "spec");
  CHECK(spec.Has("tasks"));
  CHECK_FALSE(spec.Has("queue"));
  CHECK(spec.Member("queue") == nullptr);
  REQUIRE(spec.Member("tasks") != nullptr);
  CHECK(spec.Member("tasks")->IsArray());
  std::vector<basalt::api::FieldReader> tasks = spec.Elements("tasks");
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0].index() == 0);
  CHECK(tasks[1].index() == 2);
  CHECK(tasks[1].path() == "spec.tasks[2]");
  CHECK(tasks[1].String("name") == "c");
  CHECK(MessageOf(root.status()) == "spec.tasks[1]: must be an object");
}
