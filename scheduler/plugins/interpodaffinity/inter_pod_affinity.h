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
// "Placed" is read live from the snapshot: every task on a node that is not Releasing, so tasks
// allocated or pipelined earlier in the same session count, and a discarded statement or an
// eviction is seen at once. Per-pod work (matching the placed pods against the incoming pod's
// terms) is done once per incoming task and reused for every node until PlacementChanged().
// When no task in the snapshot has pod affinity terms, Filter and Score return at once.
//
// Borrows the ClusterInfo, which must outlive it and keep its nodes and tasks in place (a
// session's snapshot does). Not thread-safe.

#include <cstdint>
#include <map>
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

  // Call whenever a task is placed on or taken off a node (the session's event handlers).
  void PlacementChanged() { ++generation_; }

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
    std::string task_uid;
    uint64_t generation = 0;
    TopologyCounts affinity;       // placed pods matching all of the task's affinity terms
    TopologyCounts anti_affinity;  // placed pods matching one of the task's anti-affinity terms
    TopologyCounts existing_anti;  // placed pods whose anti-affinity terms match the task
  };

  // The task's node if it is placed (on a snapshot node and not Releasing), else nullptr.
  const NodeInfo* PlacedNode(const TaskInfo& t) const;
  const FilterState& StateFor(const TaskInfo& task);
  static void Add(TopologyCounts& counts, const std::string& key, const NodeInfo& node,
                  int64_t value);
  static int64_t Get(const TopologyCounts& counts, const std::string& key, const NodeInfo& node);

  const ClusterInfo& cluster_;
  std::vector<const TaskInfo*> with_affinity_;  // every task with pod (anti-)affinity terms
  bool any_required_anti_ = false;
  uint64_t generation_ = 1;
  FilterState state_;
};

}  // namespace basalt::sched
