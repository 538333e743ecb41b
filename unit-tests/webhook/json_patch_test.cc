#include "webhook/json_patch.h"

#include <catch2/catch.hpp>

#include "common/util/status.h"
#include "unit-tests/webhook/testing/builders.h"

namespace basalt::webhook {
namespace {

using testing::Canonical;

std::string Apply(std::string_view doc_json, std::string_view patch,
                  absl::Status* status = nullptr) {
  auto doc = json::Parse(doc_json);
  REQUIRE(doc.ok());
  absl::Status s = ApplyJsonPatch(*doc, patch);
  if (status != nullptr) *status = s;
  return json::Serialize(*doc);
}

TEST_CASE("JsonPatch: pointer tokens escape ~ and /", "[webhook]") {
  CHECK(EscapePointerToken("volcano.sh/hierarchy") == "volcano.sh~1hierarchy");
  CHECK(EscapePointerToken("a~b/c") == "a~0b~1c");
  CHECK(EscapePointerToken("plain") == "plain");
}

TEST_CASE("JsonPatch: the builder emits RFC 6902 operations in order", "[webhook]") {
  JsonPatch patch;
  CHECK(patch.empty());
  CHECK(patch.ToJson() == "[]");
  patch.AddString("/spec/queue", "default");
  patch.AddInt("/spec/maxRetry", 3);
  patch.AddBool("/spec/reclaimable", true);
  patch.ReplaceInt("/spec/weight", 1);
  patch.Remove("/spec/old");
  CHECK(patch.size() == 5);
  CHECK(patch.ToJson() == R"([{"op":"add","path":"/spec/queue","value":"default"},)"
                          R"({"op":"add","path":"/spec/maxRetry","value":3},)"
                          R"({"op":"add","path":"/spec/reclaimable","value":true},)"
                          R"({"op":"replace","path":"/spec/weight","value":1},)"
                          R"({"op":"remove","path":"/spec/old"}])");
}

TEST_CASE("ApplyJsonPatch: add, replace, remove, move, copy and test", "[webhook]") {
  CHECK(Apply(R"({"a":{"b":1}})", R"([{"op":"add","path":"/a/c","value":[1]}])") ==
        R"({"a":{"b":1,"c":[1]}})");
  CHECK(Apply(R"({"a":[1,3]})", R"([{"op":"add","path":"/a/1","value":2}])") == R"({"a":[1,2,3]})");
  CHECK(Apply(R"({"a":[1]})", R"([{"op":"add","path":"/a/-","value":2}])") == R"({"a":[1,2]})");
  CHECK(Apply(R"({"a":1})", R"([{"op":"replace","path":"/a","value":"x"}])") == R"({"a":"x"})");
  CHECK(Apply(R"({"a":1,"b":2,"c":3})", R"([{"op":"remove","path":"/a"}])") == R"({"b":2,"c":3})");
  CHECK(Apply(R"({"a":[1,2,3]})", R"([{"op":"remove","path":"/a/0"}])") == R"({"a":[2,3]})");
  CHECK(Apply(R"({"a":1})", R"([{"op":"move","from":"/a","path":"/b"}])") == R"({"b":1})");
  CHECK(Apply(R"({"a":{"x":1}})", R"([{"op":"copy","from":"/a","path":"/b"}])") ==
        R"({"a":{"x":1},"b":{"x":1}})");
  CHECK(Apply(R"({"m":{"volcano.sh/h":"a"}})",
              R"([{"op":"replace","path":"/m/volcano.sh~1h","value":"b"}])") ==
        R"({"m":{"volcano.sh/h":"b"}})");
  absl::Status s;
  Apply(R"({"a":1})", R"([{"op":"test","path":"/a","value":1}])", &s);
  CHECK(s.ok());
}

TEST_CASE("ApplyJsonPatch: failures name the operation and path", "[webhook]") {
  absl::Status s;
  Apply(R"({"a":1})", R"([{"op":"replace","path":"/missing","value":1}])", &s);
  CHECK(std::string(MessageOf(s)) == "patch operation 0 (replace /missing): path does not exist");
  Apply(R"({"a":1})", R"([{"op":"add","path":"/x/y","value":1}])", &s);
  CHECK(std::string(MessageOf(s)) == "patch operation 0 (add /x/y): parent does not exist");
  Apply(R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])", &s);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  Apply(R"({"a":1})", R"([{"op":"frobnicate","path":"/a"}])", &s);
  CHECK(std::string(MessageOf(s)) ==
        "patch operation 0 (frobnicate /a): unknown op \"frobnicate\"");
  Apply(R"({"a":1})", R"({"op":"add"})", &s);
  CHECK(std::string(MessageOf(s)) == "JSON patch must be an array");
  Apply(R"({"a":[1]})", R"([{"op":"add","path":"/a/5","value":1}])", &s);
  CHECK(s.code() == absl::StatusCode::kOutOfRange);
}

TEST_CASE("JsonPatch: a built patch applies back to the document", "[webhook]") {
  JsonPatch patch;
  patch.AddString("/metadata/annotations/" + EscapePointerToken("volcano.sh/hierarchy"), "root/a");
  json::Value tasks(rapidjson::kArrayType);
  patch.Add("/spec/tasks", tasks);
  CHECK(Apply(R"({"metadata":{"annotations":{}},"spec":{}})", patch.ToJson()) ==
        R"({"metadata":{"annotations":{"volcano.sh/hierarchy":"root/a"}},"spec":{"tasks":[]}})");
  CHECK(Canonical(R"({"b":1,"a":{"d":1,"c":2}})") == R"({"a":{"c":2,"d":1},"b":1})");
}

}  // namespace
}  // namespace basalt::webhook
