#include "controllers/hypernode/hypernode_controller.h"

#include <catch2/catch.hpp>

#include "common/api/vocabulary.h"

namespace basalt::controllers {
namespace {

constexpr std::string_view kLegacy = R"(
networkTopologyDiscovery:
- source: ufm
  enabled: false
  interval: 10m
- source: label
  enabled: true
  interval: 30s
  config:
    networkTopologyTypes:
      fabric:
      - nodeLabel: example.com/spine
      - nodeLabel: example.com/switch
      - nodeLabel: kubernetes.io/hostname
)";

NodeLabels Node(std::string name, std::string sw, std::string spine) {
  NodeLabels n;
  n.name = std::move(name);
  n.labels["kubernetes.io/hostname"] = n.name;
  if (!sw.empty()) n.labels["example.com/switch"] = std::move(sw);
  if (!spine.empty()) n.labels["example.com/spine"] = std::move(spine);
  return n;
}

TEST_CASE("ParseDiscoveryConfig: Volcano's label discovery, legacy and profile forms",
          "[controllers][hypernode]") {
  absl::StatusOr<LabelDiscoveryConfig> c = ParseDiscoveryConfig(kLegacy);
  REQUIRE(c.ok());
  CHECK(c->enabled);
  CHECK(c->interval == std::chrono::seconds(30));
  REQUIRE(c->profiles.size() == 1);
  CHECK(c->profiles[0].name == "fabric");
  REQUIRE(c->profiles[0].levels.size() == 3);
  CHECK(c->profiles[0].levels[1].node_label == "example.com/switch");
  CHECK(c->profiles[0].levels[1].tier_name == "example.com/switch");

  c = ParseDiscoveryConfig(R"(
networkTopologyDiscovery:
- source: label
  enabled: true
  config:
    networkTopologyTypes:
      gpu:
        nodeSelector:
          matchLabels: {pool: gpu}
        levels:
        - {nodeLabel: example.com/switch, tierName: switch}
        - {nodeLabel: kubernetes.io/hostname}
)");
  REQUIRE(c.ok());
  CHECK(c->interval == std::chrono::hours(1));
  REQUIRE(c->profiles.size() == 1);
  CHECK(c->profiles[0].selector == std::map<std::string, std::string>{{"pool", "gpu"}});
  CHECK(c->profiles[0].levels[0].tier_name == "switch");

  c = ParseDiscoveryConfig("{}");
  REQUIRE(c.ok());
  CHECK_FALSE(c->enabled);
}

TEST_CASE("ParseDiscoveryConfig: refusals name the field", "[controllers][hypernode]") {
  absl::StatusOr<LabelDiscoveryConfig> c = ParseDiscoveryConfig(R"(
networkTopologyDiscovery:
- {source: ufm, enabled: true}
)");
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(std::string(c.status().message()),
             Catch::Contains("networkTopologyDiscovery[0].source: \"ufm\" is not supported"));
  c = ParseDiscoveryConfig(R"(
networkTopologyDiscovery:
- source: label
  enabled: true
  config: {networkTopologyTypes: {t: [{nodeLabel: kubernetes.io/hostname}]}}
)");
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(std::string(c.status().message()), Catch::Contains("needs at least two levels"));
  c = ParseDiscoveryConfig(R"(
networkTopologyDiscovery:
- source: label
  enabled: true
  interval: soon
  config: {networkTopologyTypes: {t: [{nodeLabel: a}, {nodeLabel: b}]}}
)");
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(std::string(c.status().message()), Catch::Contains("interval"));
}

TEST_CASE("DiscoverHyperNodes: switches at tier 1, spines at tier 2", "[controllers][hypernode]") {
  absl::StatusOr<LabelDiscoveryConfig> c = ParseDiscoveryConfig(kLegacy);
  REQUIRE(c.ok());
  std::vector<NodeLabels> nodes = {Node("n0", "s0", "p0"), Node("n1", "s0", "p0"),
                                   Node("n2", "S1", "p0"), Node("n3", "s2", "p1"),
                                   Node("lonely", "s9", "")};  // no spine: in no HyperNode
  std::vector<std::string> conflicts;
  std::vector<DiscoveredHyperNode> hns = DiscoverHyperNodes(*c, nodes, &conflicts);
  CHECK(conflicts.empty());
  std::map<std::string, const DiscoveredHyperNode*> by_name;
  for (const auto& h : hns) by_name[h.name] = &h;
  REQUIRE(by_name.size() == 5);  // s0 s1 s2 p0 p1
  const DiscoveredHyperNode& s0 = *by_name.at("s0");
  CHECK(s0.spec.tier == 1);
  CHECK(s0.spec.tier_name == "example.com/switch");
  CHECK(s0.node_count == 2);
  REQUIRE(s0.spec.members.size() == 2);
  CHECK(s0.spec.members[0].type == api::MemberType::kNode);
  CHECK(s0.spec.members[0].exact_name == "n0");
  CHECK(by_name.at("s1")->spec.members[0].exact_name == "n2");  // "S1" as an object name
  const DiscoveredHyperNode& p0 = *by_name.at("p0");
  CHECK(p0.spec.tier == 2);
  CHECK(p0.node_count == 3);
  REQUIRE(p0.spec.members.size() == 2);
  CHECK(p0.spec.members[0].type == api::MemberType::kHyperNode);
  CHECK(p0.spec.members[0].exact_name == "s0");
  CHECK(p0.spec.members[1].exact_name == "s1");

  api::HyperNode doc = DesiredDocument(s0);
  CHECK(doc.label(api::kNetworkTopologySourceLabel) == "label");
  CHECK(doc.label("volcano.sh/network-topology-profile") == "fabric");
  absl::StatusOr<api::HyperNode> back = api::HyperNode::Parse(doc.ToJson());
  REQUIRE(back.ok());
  CHECK(back->spec() == s0.spec);
}

TEST_CASE("DiscoverHyperNodes: a value used at two tiers is kept once and reported",
          "[controllers][hypernode]") {
  absl::StatusOr<LabelDiscoveryConfig> c = ParseDiscoveryConfig(kLegacy);
  REQUIRE(c.ok());
  std::vector<std::string> conflicts;
  std::vector<DiscoveredHyperNode> hns = DiscoverHyperNodes(*c, {Node("n0", "x", "x")}, &conflicts);
  REQUIRE(hns.size() == 1);
  CHECK(hns[0].spec.tier == 1);
  REQUIRE(conflicts.size() == 1);
  CHECK_THAT(conflicts[0], Catch::Contains("HyperNode name x (profile fabric, tier 2)"));
}

}  // namespace
}  // namespace basalt::controllers
