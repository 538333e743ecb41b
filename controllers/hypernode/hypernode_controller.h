#pragma once
// The hypernode controller discovers HyperNodes (topology.volcano.sh/v1alpha1) from node labels,
// configured as Volcano's label discovery is (the `networkTopologyDiscovery` section of
// volcano-controller.conf, given with --hypernode-discovery-config):
//
//   networkTopologyDiscovery:
//   - source: label
//     enabled: true
//     interval: 10m                       # also re-run on every node and HyperNode change
//     config:
//       networkTopologyTypes:
//         fabric:                         # legacy form: label keys, highest tier first,
//         - nodeLabel: example.com/spine  #   kubernetes.io/hostname last (the nodes)
//         - nodeLabel: example.com/switch
//         - nodeLabel: kubernetes.io/hostname
//         gpu:                            # profile form: nodes selected by labels, levels
//           nodeSelector:                 #   with a tierName each
//             matchLabels: {pool: gpu}
//           levels:
//           - {nodeLabel: example.com/switch, tierName: switch}
//           - {nodeLabel: kubernetes.io/hostname}
//
// For every distinct value of a level's label a HyperNode is made, named after the value, at
// tier 1 for the level just above the nodes and one more per level up; tier 1 lists its nodes
// by exact name, higher tiers list the HyperNodes of the level below. A node missing one of the
// labels of its profile is in no HyperNode of that profile. Discovered HyperNodes carry
// volcano.sh/network-topology-source=label and volcano.sh/network-topology-profile=<type>, and
// status.nodeCount. The controller creates, updates and deletes only HyperNodes with that
// source label: a HyperNode a user created is never touched, and a discovered name that
// collides with one is skipped with a warning. Sources other than label (ufm, roce) are refused
// at start-up when enabled. Without the flag the controller runs and does nothing.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/topology.h"
#include "controllers/app/controller.h"

namespace basalt::controllers {

struct DiscoveryLevel {
  std::string node_label;
  std::string tier_name;  // the node label in the legacy form
};

struct DiscoveryProfile {
  std::string name;                             // the networkTopologyTypes key
  std::map<std::string, std::string> selector;  // nodeSelector.matchLabels (profile form)
  std::vector<DiscoveryLevel> levels;           // highest first; the last is the node level
};

struct LabelDiscoveryConfig {
  bool enabled = false;
  std::chrono::milliseconds interval = std::chrono::hours(1);  // Volcano's default
  std::vector<DiscoveryProfile> profiles;
};

// Parses volcano-controller.conf (YAML). No networkTopologyDiscovery or no enabled label
// source: enabled = false. kInvalidArgument names the field for an enabled source other than
// label, a profile with fewer than two levels, a level without nodeLabel, or a bad interval.
absl::StatusOr<LabelDiscoveryConfig> ParseDiscoveryConfig(std::string_view yaml);

struct NodeLabels {
  std::string name;
  std::map<std::string, std::string, std::less<>> labels;
};

struct DiscoveredHyperNode {
  std::string name;
  std::string profile;
  api::HyperNodeSpec spec;
  int64_t node_count = 0;
};

// The HyperNodes `config` makes of `nodes`, sorted by name. A value that two profiles or two
// tiers both use keeps the first (profile order, then lowest tier) and is reported in
// `conflicts` (may be null). Values that are not valid object names are lower-cased with
// other characters replaced by '-'.
std::vector<DiscoveredHyperNode> DiscoverHyperNodes(const LabelDiscoveryConfig& config,
                                                    const std::vector<NodeLabels>& nodes,
                                                    std::vector<std::string>* conflicts);

// The HyperNode document to create or PUT for `d` (labels, spec; status written apart).
api::HyperNode DesiredDocument(const DiscoveredHyperNode& d);

absl::StatusOr<std::unique_ptr<Controller>> NewHyperNodeController(const ControllerContext& ctx);

}  // namespace basalt::controllers
