#pragma once
// Typed views of Volcano's network topology model: the cluster-scoped HyperNode
// (topology.volcano.sh/v1alpha1, crds/topology.volcano.sh_hypernodes.yaml) and the
// `networkTopology` constraint a Job or PodGroup carries (mode, highestTierAllowed,
// highestTierName).
//
// A HyperNode is one network domain (a switch, a spine) at a numbered tier (1 = closest to the
// nodes); its members are Nodes or lower-tier HyperNodes, each chosen by exact name, a regular
// expression or (Nodes only) node labels. As in scheduling.h: the raw document is kept whole,
// the structs are decoded at parse time, errors name the object and field path, and SetSpec
// keeps document and struct in sync. Thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/object.h"

namespace basalt::api {

class FieldReader;

// --- networkTopology ---------------------------------------------------------------------

// spec.networkTopology of a Job or PodGroup (and the same object in a task's partitionPolicy).
struct NetworkTopology {
  std::string mode = "hard";  // "hard" | "soft" (the CRD's default is hard)
  std::optional<int32_t> highest_tier_allowed;
  std::string highest_tier_name;

  bool Hard() const { return mode != "soft"; }
  friend bool operator==(const NetworkTopology&, const NetworkTopology&) = default;
};

// Reads r["networkTopology"]; nullopt when absent.
std::optional<NetworkTopology> DecodeNetworkTopology(FieldReader& r);
// The networkTopology object for `t`: mode ("hard" when empty), then highestTierAllowed when
// set, else highestTierName when not empty (the CRD allows one of the two).
json::Value EncodeNetworkTopology(const NetworkTopology& t, json::Allocator& a);

// --- HyperNode -----------------------------------------------------------------------------

enum class MemberType { kNode, kHyperNode };

// spec.members[]: exactly one of the three selectors is set (the CRD's validation rule).
struct HyperNodeMember {
  MemberType type = MemberType::kNode;
  std::string exact_name;     // selector.exactMatch.name
  std::string regex_pattern;  // selector.regexMatch.pattern
  // selector.labelMatch.matchLabels; label_match is true when labelMatch is present.
  bool label_match = false;
  StringMap match_labels;

  friend bool operator==(const HyperNodeMember&, const HyperNodeMember&) = default;
};

struct HyperNodeSpec {
  int32_t tier = 0;
  std::string tier_name;
  std::vector<HyperNodeMember> members;

  friend bool operator==(const HyperNodeSpec&, const HyperNodeSpec&) = default;
};

class HyperNode : public Object {
 public:
  static HyperNode Make(std::string_view name);
  static absl::StatusOr<HyperNode> Parse(std::string_view json_text);
  static absl::StatusOr<HyperNode> FromObject(Object obj);

  const HyperNodeSpec& spec() const { return spec_; }
  int64_t node_count() const { return node_count_; }  // status.nodeCount

  // Writes tier, tierName (removed when empty) and members, keeping other spec fields.
  void SetSpec(const HyperNodeSpec& spec);

 private:
  explicit HyperNode(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  HyperNodeSpec spec_;
  int64_t node_count_ = 0;
};

}  // namespace basalt::api
