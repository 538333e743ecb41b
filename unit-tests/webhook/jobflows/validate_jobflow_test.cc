#include "webhook/jobflows/validate_jobflow.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/util/json.h"

namespace basalt::webhook {
namespace {

std::string Errors(std::string_view spec, std::string_view name = "wf") {
  absl::StatusOr<json::Document> doc = json::Parse(
      std::string(
          R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":")") +
      std::string(name) + R"("},"spec":)" + std::string(spec) + "}");
  REQUIRE(doc.ok());
  return ValidateJobFlow(*doc).Message();
}

TEST_CASE("ValidateJobFlow: a DAG with targets among the flows is admitted", "[webhook][jobflow]") {
  CHECK(Errors(R"({"jobRetainPolicy":"delete","flows":[{"name":"a"},
      {"name":"b","dependsOn":{"targets":["a"]}},{"name":"c","dependsOn":{"targets":["b","a"]}}]})")
            .empty());
}

TEST_CASE("ValidateJobFlow: cycles, unknown targets, duplicates and probes name their field",
          "[webhook][jobflow]") {
  CHECK(Errors(R"({"flows":[]})") == "spec.flows: Required value: at least one flow");
  CHECK(Errors(R"({"flows":[{"name":"a","dependsOn":{"targets":["b"]}},
      {"name":"b","dependsOn":{"targets":["a"]}}]})") ==
        "spec.flows: Invalid value: jobflow flow is not dag: a depends on itself through "
        "dependsOn.targets (a -> b -> a)");
  CHECK(Errors(R"({"flows":[{"name":"a","dependsOn":{"targets":["x"]}}]})") ==
        "spec.flows[0].dependsOn.targets[0]: Not found: \"x\": not the name of a flow in "
        "spec.flows");
  CHECK(Errors(R"({"flows":[{"name":"a","dependsOn":{"targets":["a"]}}]})") ==
        "spec.flows[0].dependsOn.targets[0]: Invalid value: \"a\": a flow cannot depend on itself");
  CHECK(Errors(R"({"flows":[{"name":"a"},{"name":"a"}]})") ==
        "spec.flows[1].name: Duplicate value: \"a\"");
  CHECK(Errors(R"({"flows":[{"name":"A_b"}]})")
            .starts_with("spec.flows[0].name: Invalid value: \"A_b\""));
  CHECK(Errors(R"({"flows":[{"name":"a","dependsOn":{"probe":{"tcpSocketList":[{"port":80}]}}}]})")
            .starts_with("spec.flows[0].dependsOn.probe: Forbidden: probes"));
  CHECK(Errors(R"({"flows":[{"name":"a"}],"jobRetainPolicy":"keep"})") ==
        "spec.jobRetainPolicy: Unsupported value: \"keep\": supported values: \"retain\", "
        "\"delete\"");
  CHECK(Errors(R"({"flows":[{"name":"a"}]})", std::string(62, 'w'))
            .find("must be a DNS-1123 label of at most 63 characters") != std::string::npos);
}

TEST_CASE("ValidateJobFlow: members of the wrong type read as absent or empty",
          "[webhook][jobflow]") {
  CHECK(Errors(R"({"flows":"a"})") == "spec.flows: Required value: at least one flow");
  CHECK(Errors(R"({"flows":[{"name":"a","dependsOn":"b"}]})").empty());
  CHECK(Errors(R"({"flows":[{"name":"a"},{"name":"b","dependsOn":{"targets":[5,"a"]}}]})") ==
        "spec.flows[1].dependsOn.targets[0]: Not found: \"\": not the name of a flow in "
        "spec.flows");
  CHECK(Errors(R"({"flows":[{"name":"a"}],"jobRetainPolicy":5})") ==
        "spec.jobRetainPolicy: Unsupported value: \"?\": supported values: \"retain\", "
        "\"delete\"");
  CHECK(Errors(R"({"flows":[{"name":"a"}],"jobRetainPolicy":null})").empty());
}

}  // namespace
}  // namespace basalt::webhook
