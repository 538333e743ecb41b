#include "cli/yaml_json.h"

#include "catch2/catch.hpp"
#include "common/util/json.h"

namespace basalt::cli {
namespace {

TEST_CASE("YamlToJson: a Job manifest keeps its types", "[cli][yaml]") {
  absl::StatusOr<std::string> j = YamlToJson(R"(
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: train
  annotations: {basalt.dev/exit-code: "3", ratio: 0.5}
spec:
  minAvailable: 2
  suspend: false
  ttl: ~
  tasks:
  - name: worker
    replicas: 2
    cmd: ["sh", "-c", 'echo 1']
)");
  REQUIRE(j.ok());
  CHECK(*j ==
        R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"train",)"
        R"("annotations":{"basalt.dev/exit-code":"3","ratio":0.5}},"spec":{"minAvailable":2,)"
        R"("suspend":false,"ttl":null,"tasks":[{"name":"worker","replicas":2,)"
        R"("cmd":["sh","-c","echo 1"]}]}})");
}

TEST_CASE("YamlToJson: JSON input, leading document markers and errors", "[cli][yaml]") {
  CHECK(*YamlToJson(R"({"kind": "Job", "spec": {"minAvailable": 1}})") ==
        R"({"kind":"Job","spec":{"minAvailable":1}})");
  CHECK(*YamlToJson("---\nkind: Job\n") == R"({"kind":"Job"})");
  CHECK(YamlToJson("").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(YamlToJson("- a\n- b\n").status().code() == absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> two = YamlToJson("kind: Job\n---\nkind: Job\n");
  REQUIRE_FALSE(two.ok());
  CHECK(std::string(two.status().message()).find("2 documents") != std::string::npos);
  absl::StatusOr<std::string> bad = YamlToJson("kind: Job\nspec: [a\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("line ") != std::string::npos);
}

}  // namespace
}  // namespace basalt::cli
