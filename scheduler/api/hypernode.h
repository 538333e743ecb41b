#pragma once
// The network topology a session sees: HyperNodes as the cache converted them (HyperNodeInfo,
// a map shared read-only between snapshots), the `networkTopology` constraint of a job, and
// HyperNodeTree, which resolves every HyperNode to the nodes under it (members of type
// HyperNode followed down, exact, regex and label selectors matched against the snapshot's
// nodes).
//
// HyperNodeInfo and NetworkTopologyConstraint are values. A HyperNodeTree is built once per
// session from the snapshot and is immutable afterwards (thread-compatible); it does not point
// into the nodes.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/api/node_info.h"

namespace basalt::sched {

struct HyperNodeMemberInfo {
  bool hypernode = false;  // type HyperNode (else Node)
  std::string exact_name;
  std::string regex_pattern;
  bool by_labels = false;  // labelMatch: nodes carrying every label of `labels`
  std::map<std::string, std::string> labels;

  friend bool operator==(const HyperNodeMemberInfo&, const HyperNodeMemberInfo&) = default;
};

struct HyperNodeInfo {
  std::string name;
  int32_t tier = 0;
  std::string tier_name;
  std::vector<HyperNodeMemberInfo> members;

  friend bool operator==(const HyperNodeInfo&, const HyperNodeInfo&) = default;
};

using HyperNodeMap = std::map<std::string, HyperNodeInfo>;

// A job's spec.networkTopology. `hard`: every task of the gang in one HyperNode of tier
// <= highest_tier, or none placed; soft: as few domains as possible.
struct NetworkTopologyConstraint {
  bool hard = true;
  std::optional<int32_t> highest_tier;  // highestTierAllowed
  std::string highest_tier_name;        // highestTierName (a HyperNode tierName)

  friend bool operator==(const NetworkTopologyConstraint&,
                         const NetworkTopologyConstraint&) = default;
};

class HyperNodeTree {
 public:
  struct Domain {
    std::string name;
    int32_t tier = 0;
    std::string tier_name;
    std::vector<std::string> nodes;  // the snapshot's nodes under it, sorted, no duplicates
  };

  HyperNodeTree() = default;
  // Resolves `hypernodes` against `nodes`. A HyperNode member naming a HyperNode that does not
  // exist, or one of the same or a higher tier, contributes nothing (no cycles); a regex that
  // does not compile matches nothing.
  static HyperNodeTree Build(const HyperNodeMap& hypernodes,
                             const std::map<std::string, NodeInfo>& nodes);

  bool empty() const { return domains_.empty(); }
  // Every HyperNode, ordered by tier, then name.
  const std::vector<Domain>& domains() const { return domains_; }
  const Domain* Find(const std::string& name) const;
  // The tier of HyperNodes whose tierName is `tier_name`, if any has it.
  std::optional<int32_t> TierOfName(const std::string& tier_name) const;
  // The HyperNode of the lowest tier (then name) containing node `node`, with tier <= max_tier.
  const Domain* LowestContaining(const std::string& node, int32_t max_tier) const;

 private:
  std::vector<Domain> domains_;
  std::map<std::string, size_t> index_;
};

}  // namespace basalt::sched
