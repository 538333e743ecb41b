#pragma once
// InterPodAffinity evaluates pod affinity and anti-affinity (kube-scheduler's InterPodAffinity
// filter and score) over one session's snapshot, for the predicates and nodeorder plugins:
//
//   Filter  requiredDuringScheduling terms: the incoming pod's affinity (some matching pod in
//           the node's topology domain, or none anywhere and the pod matches its own terms),
//           its anti-affinity (no matching pod in the domain), and the anti-affinity of pods
//           already placed (symmetry: no placed pod whose terms match the incoming pod).
//   Score   preferredDuringScheduling terms of both sides (and placed pods' required affinity
//           terms with weight 1), summed per topology domain.
//
// "Placed" means every task on a node that is not Releasing, so tasks allocated or pipelined
// earlier in the same session count, and a discarded statement or an eviction is seen at once.
// Filter matches the placed pods against the incoming pod once and keeps the counts per
// topology domain; they are reused for every node and for every following pod with the same
// namespace, terms and values of the labels any term looks at (the pods of a gang, whatever
// their per-pod index label), and kept up to date by TaskPlaced /
// TaskRemoved, so a gang of N pods costs one pass over the placed pods, not N. Score reads the
// placements live. When no task in the snapshot has pod affinity terms, both return at once.
//
// Borrows the ClusterInfo, which must outlive it and keep its nodes and tasks in place (a
// session's snapshot does). Not thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/api/cluster_info.h"
#include "scheduler/framework/outcome.h"

namespace basalt::sched {

class InterPodAffinity {
 public:
  explicit InterPodAffinity(const ClusterInfo& cluster);
  InterPodAffinity(const InterPodAffinity&) = delete;
  InterPodAffinity& operator=(const InterPodAffinity&) = delete;

  // The session's event handlers: `task` was placed on its node (allocated, pipelined, eviction
  // undone) / taken off a node (allocation undone, evicted). The filter counts are updated in
  // place when the node is known, else rebuilt at the next Filter.
  void TaskPlaced(const TaskInfo& task);
  void TaskRemoved(const TaskInfo& task);
  // Forgets the filter counts (rebuilt at the next Filter), after changes made behind the
  // session's back (tests).
  void PlacementChanged() {
    state_.valid = false;
    last_uid_.clear();
  }

  // kSuccess, kUnschedulableAndUnresolvable with kReasonPodAffinity, or kUnschedulable with
  // kReasonPodAntiAffinity / kReasonExistingPodsAntiAffinity; `plugin` names the caller.
  Outcome Filter(const TaskInfo& task, const NodeInfo& node, const std::string& plugin);

  // Scores 0..100 aligned with `nodes` (kube-scheduler's normalisation: min..max mapped to
  // 0..100; all equal -> 0). Empty when nothing in the snapshot has preferred terms that could
  // apply (the caller then adds nothing).
  std::vector<int64_t> Score(const TaskInfo& task, const std::vector<const NodeInfo*>& nodes);

  // True if some task in the snapshot has pod (anti-)affinity terms.
  bool Any() const { return !with_affinity_.empty(); }

 private:
  // topology key -> topology value -> count (or summed weight).
  using TopologyCounts = std::map<std::string, std::unordered_map<std::string, int64_t>>;

  struct FilterState {
    bool valid = false;
    // False when the counts were computed for a pod that is itself placed (and left out): they
    // then serve that pod only.
    bool shareable = true;
    // The pod the counts are for.
    std::string namespace_name;
    Shared<LabelSet> labels;  // shared with the task
    std::shared_ptr<const PodAffinity> terms;
    TopologyCounts affinity;       // placed pods matching all of the pod's affinity terms
    TopologyCounts anti_affinity;  // placed pods matching one of the pod's anti-affinity terms
    TopologyCounts existing_anti;  // placed pods whose anti-affinity terms match the pod
  };

  // The task's node if it is placed (on a snapshot node and not Releasing), else nullptr.
  const NodeInfo* PlacedNode(const TaskInfo& t) const;
  const FilterState& StateFor(const TaskInfo& task);
  bool SameSignature(const TaskInfo& task) const;
  // Adds (sign +1) or removes (-1) what `placed` on `node` contributes to state_.
  void Contribute(const TaskInfo& placed, const NodeInfo& node, int64_t sign);
  // Adds `value` to the domain of `node` for `key` (nothing if the node lacks the label);
  // entries that reach 0 are erased, so an empty map means "no pod anywhere".
  static void Add(TopologyCounts& counts, const std::string& key, const NodeInfo& node,
                  int64_t value);
  static int64_t Get(const TopologyCounts& counts, const std::string& key, const NodeInfo& node);

  const ClusterInfo& cluster_;
  std::vector<const TaskInfo*> with_affinity_;  // every task with pod (anti-)affinity terms
  // Tasks whose terms add to other pods' scores: required affinity or any preferred term.
  std::vector<const TaskInfo*> with_scoring_terms_;
  bool any_required_anti_ = false;
  // Every label key a label selector of some term in the snapshot looks at: pods that agree on
  // these (and on namespace and terms) are alike for the filter.
  std::set<std::string> selector_keys_;
  FilterState state_;
  std::string last_uid_;  // the task state_ was last handed out for (fast path per node)
};

}  // namespace basalt::sched
