#include "common/api/topology.h"

#include <catch2/catch.hpp>

#include "common/api/scheduling.h"

namespace basalt::api {
namespace {

TEST_CASE("HyperNode: members by exact name, regex and labels, unknown fields kept",
          "[api][topology]") {
  absl::StatusOr<HyperNode> hn = HyperNode::Parse(R"({
    "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
    "metadata": {"name": "s0", "labels": {"volcano.sh/network-topology-source": "label"}},
    "spec": {"tier": 1, "tierName": "switch", "future": true, "members": [
      {"type": "Node", "selector": {"exactMatch": {"name": "n0"}}},
      {"type": "Node", "selector": {"regexMatch": {"pattern": "^n[12]$"}}},
      {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}},
      {"type": "HyperNode", "selector": {"exactMatch": {"name": "s9"}}}]},
    "status": {"nodeCount": 4}})");
  REQUIRE(hn.ok());
  CHECK(hn->spec().tier == 1);
  CHECK(hn->spec().tier_name == "switch");
  CHECK(hn->node_count() == 4);
  REQUIRE(hn->spec().members.size() == 4);
  CHECK(hn->spec().members[0].exact_name == "n0");
  CHECK(hn->spec().members[1].regex_pattern == "^n[12]$");
  CHECK(hn->spec().members[2].label_match);
  CHECK(hn->spec().members[2].match_labels.at("rack") == "a");
  CHECK(hn->spec().members[3].type == MemberType::kHyperNode);

  HyperNodeSpec spec = hn->spec();
  spec.members.resize(1);
  spec.tier = 2;
  hn->SetSpec(spec);
  absl::StatusOr<HyperNode> back = HyperNode::Parse(hn->ToJson());
  REQUIRE(back.ok());
  CHECK(back->spec() == spec);
  CHECK(hn->ToJson().find("\"future\":true") != std::string::npos);
}

TEST_CASE("HyperNode: a member type other than Node or HyperNode is an error naming the field",
          "[api][topology]") {
  absl::StatusOr<HyperNode> hn = HyperNode::Parse(
      R"({"kind": "HyperNode", "metadata": {"name": "x"},
          "spec": {"tier": 1, "members": [{"type": "Rack"}]}})");
  REQUIRE_FALSE(hn.ok());
  CHECK_THAT(std::string(hn.status().message()), Catch::Contains("type"));
}

TEST_CASE("PodGroup: spec.networkTopology typed (mode defaults to hard)", "[api][topology]") {
  absl::StatusOr<PodGroup> pg = PodGroup::Parse(
      R"({"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ns"},
          "spec": {"minMember": 2, "networkTopology": {"highestTierAllowed": 1}}})");
  REQUIRE(pg.ok());
  REQUIRE(pg->spec().network_topology.has_value());
  CHECK(pg->spec().network_topology->Hard());
  CHECK(pg->spec().network_topology->highest_tier_allowed == 1);
  pg = PodGroup::Parse(
      R"({"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ns"},
          "spec": {"networkTopology": {"mode": "soft", "highestTierName": "spine"}}})");
  REQUIRE(pg.ok());
  CHECK_FALSE(pg->spec().network_topology->Hard());
  CHECK(pg->spec().network_topology->highest_tier_name == "spine");
  pg = PodGroup::Parse(R"({"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ns"}})");
  REQUIRE(pg.ok());
  CHECK_FALSE(pg->spec().network_topology.has_value());
}

}  // namespace
}  // namespace basalt::api

namespace basalt::api {
namespace {

TEST_CASE("Queue: nodeGroupAffinity and nodeGroupAntiAffinity typed", "[api][nodegroup]") {
  absl::StatusOr<Queue> q = Queue::Parse(R"({"kind": "Queue", "metadata": {"name": "q"},
    "spec": {"affinity": {
      "nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["a", "b"],
                            "preferredDuringSchedulingIgnoredDuringExecution": ["a"]},
      "nodeGroupAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["c"]}}}})");
  REQUIRE(q.ok());
  CHECK(q->spec().node_group_affinity.required == std::vector<std::string>{"a", "b"});
  CHECK(q->spec().node_group_affinity.preferred == std::vector<std::string>{"a"});
  CHECK(q->spec().node_group_anti_affinity.required == std::vector<std::string>{"c"});
  CHECK(q->spec().node_group_anti_affinity.preferred.empty());
}

}  // namespace
}  // namespace basalt::api
