#pragma once
// Typed views of Volcano's scheduling.volcano.sh/v1beta1 Queue and PodGroup (field names and
// meaning per volcano-reference/api-controllers-webhook.md §1.3 and §1.4).
//
// As in core.h: the raw document is kept whole, the structs are decoded at parse time, errors
// name the object and field path, and Set* methods keep document and structs in sync while
// keeping fields Basalt does not know. Thread-compatible.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/object.h"
#include "common/api/topology.h"
#include "common/api/vocabulary.h"
#include "common/resource/resource_list.h"

namespace basalt::api {

// --- Queue -----------------------------------------------------------------------------

struct NodeGroupTerms {
  std::vector<std::string> required;   // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<std::string> preferred;  // preferredDuringSchedulingIgnoredDuringExecution

  friend bool operator==(const NodeGroupTerms&, const NodeGroupTerms&) = default;
};

struct QueueSpec {
  int32_t weight = 1;  // CRD default 1 when absent
  resource::ResourceList capability;
  resource::ResourceList deserved;
  resource::ResourceList guarantee;  // spec.guarantee.resource
  std::optional<bool> reclaimable;   // webhook defaults to true
  std::string parent;
  std::optional<int32_t> priority;
  std::string type;
  std::string dequeue_strategy;
  std::string affinity_json;  // spec.affinity as compact JSON ("" if absent)
  // spec.affinity.nodeGroupAffinity / nodeGroupAntiAffinity: node group names (the nodes'
  // volcano.sh/nodegroup-name label), required and preferred during scheduling.
  NodeGroupTerms node_group_affinity;
  NodeGroupTerms node_group_anti_affinity;

  bool Reclaimable() const { return reclaimable.value_or(true); }
};

struct QueueStatus {
  std::string state;  // Open, Closed, Closing, Unknown
  int32_t unknown = 0;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t inqueue = 0;
  int32_t completed = 0;
  resource::ResourceList allocated;
  // Basalt extension, written by the scheduler: the share plugin's deserved and effective
  // guarantee. Volcano's Queue status has neither; SetStatus keeps them as they are.
  resource::ResourceList deserved;
  resource::ResourceList guarantee;

  friend bool operator==(const QueueStatus&, const QueueStatus&) = default;
};

class Queue : public Object {
 public:
  static Queue Make(std::string_view name);
  static absl::StatusOr<Queue> Parse(std::string_view json_text);
  static absl::StatusOr<Queue> FromObject(Object obj);

  const QueueSpec& spec() const { return spec_; }
  const QueueStatus& status() const { return status_; }

  // Writes state, the counters (omitted when zero) and allocated (always written, as
  // Volcano serializes it); keeps other status fields such as reservation.
  void SetStatus(const QueueStatus& status);

 private:
  explicit Queue(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  QueueSpec spec_;
  QueueStatus status_;
};

// --- PodGroup --------------------------------------------------------------------------

// One spec.subGroupPolicy entry: the pods matching `label_selector_json` (all pods when empty)
// that carry every label of `match_label_keys` are grouped by those labels' values; each group
// (a sub-group) of `sub_group_size` pods is placed as a unit under its own networkTopology, and
// the gang needs `min_sub_groups` complete groups. Absent sizes read as Volcano's defaults
// (subGroupSize 1, minSubGroups 0).
struct SubGroupPolicy {
  std::string name;
  int32_t sub_group_size = 1;
  int32_t min_sub_groups = 0;
  std::string label_selector_json;  // labelSelector as compact JSON ("" if absent)
  std::vector<std::string> match_label_keys;
  std::optional<NetworkTopology> network_topology;

  friend bool operator==(const SubGroupPolicy&, const SubGroupPolicy&) = default;
};

// A labelSelector {matchLabels: `match_labels`} as compact JSON (SubGroupPolicy's
// label_selector_json).
std::string MatchLabelsSelectorJson(const StringMap& match_labels);

struct PodGroupSpec {
  int32_t min_member = 0;
  std::map<std::string, int32_t> min_task_member;
  std::optional<resource::ResourceList> min_resources;
  std::string queue;  // CRD default "default"
  std::string priority_class_name;
  // spec.networkTopology, decoded; network_topology_json is the same object as compact JSON
  // (what SetSpec writes back, so fields Basalt does not know survive). SetSpec encodes
  // network_topology when network_topology_json is empty (a PodGroup built from scratch).
  std::optional<NetworkTopology> network_topology;
  std::string network_topology_json;
  // spec.subGroupPolicy, decoded. SetSpec leaves the document's list as it is (its entries may
  // hold fields Basalt does not know); SetSubGroupPolicy writes it.
  std::vector<SubGroupPolicy> sub_group_policy;

  friend bool operator==(const PodGroupSpec&, const PodGroupSpec&) = default;
};

struct PodGroupStatus {
  std::string phase;  // Pending, Running, Unknown, Inqueue, Completed
  std::vector<Condition> conditions;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;

  friend bool operator==(const PodGroupStatus&, const PodGroupStatus&) = default;
};

class PodGroup : public Object {
 public:
  static PodGroup Make(std::string_view ns, std::string_view name);
  static absl::StatusOr<PodGroup> Parse(std::string_view json_text);
  static absl::StatusOr<PodGroup> FromObject(Object obj);

  const PodGroupSpec& spec() const { return spec_; }
  const PodGroupStatus& status() const { return status_; }
  // The status condition of `type` ("Unschedulable", "Scheduled"), if present.
  const Condition* FindCondition(std::string_view type) const;

  // Writes the known spec fields (min_resources removed when unset), keeping others.
  void SetSpec(const PodGroupSpec& spec);
  // Replaces spec.subGroupPolicy (removed when `policies` is empty). Each entry is written as
  // name, subGroupSize, minSubGroups, labelSelector (when not empty), matchLabelKeys (when not
  // empty), networkTopology (when set).
  void SetSubGroupPolicy(const std::vector<SubGroupPolicy>& policies);
  // Writes phase, conditions and counters (counters omitted when zero), keeping others.
  void SetStatus(const PodGroupStatus& status);

 private:
  explicit PodGroup(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  PodGroupSpec spec_;
  PodGroupStatus status_;
};

}  // namespace basalt::api
