#pragma once
// HdrfTree: hierarchical dominant resource fairness (the drf plugin with `enableHierarchy:
// true`). Queues form a tree of named segments below an implicit root; jobs are the leaves under
// their queue's last segment. Every node has a weight (values below 1 count as 1).
//
//  * A job's share is its dominant share of the cluster: max over the cluster's dimensions of
//    allocated_r / total_r (0/0 = 0, x/0 = 1), as in flat drf.
//  * A resource is *demanding* while the jobs together hold less of it than the cluster has. A
//    job is *saturated* when, on some dimension it holds, it holds all it requests, or it requests
//    a resource that is no longer demanding: more of the cluster would not help it.
//  * An interior node's allocation is its saturated children's allocations plus each other
//    non-empty child's allocation scaled so that its share / weight is the smallest share /
//    weight among those children (so a subtree that uses complementary resources is not charged
//    for both in full; Volcano scales to the smallest plain share, see UpdateNode); its share is
//    the dominant share of that allocation, and it is saturated when all its children are.
//  * Two nodes are compared where their paths part: unsaturated before saturated (when asked),
//    then share / weight, lower first; equal values compare the next level.
//
// Updates after a change of one job's allocation recompute that job's path to the root only,
// unless the set of demanding resources changed, which recomputes the whole tree.
//
// Not thread-safe; one instance per session (owned by the drf plugin).

#include <map>
#include <string>
#include <vector>

#include "scheduler/api/resource.h"

namespace basalt::sched {

class HdrfTree {
 public:
  explicit HdrfTree(const Resource& total);

  // Adds `job` (an id that contains '/', so it never equals a queue segment) under the queue
  // path `path` (segments below the root), creating missing interior nodes with `weights`
  // (aligned with `path`; missing or < 1 means 1; an existing node keeps its weight). A job
  // added twice keeps its first place.
  void AddJob(const std::string& job, const std::vector<std::string>& path,
              const std::vector<double>& weights, const Resource& allocated,
              const Resource& request);
  bool HasJob(const std::string& job) const { return jobs_.count(job) != 0; }
  // Adds (sign > 0) or subtracts `delta` from the job's allocation and updates the shares.
  // Unknown jobs are ignored.
  void Change(const std::string& job, const Resource& delta, int sign);

  // < 0 if the node at `l` goes before the node at `r`, > 0 if after, 0 if equal (see above);
  // the magnitude is the share/weight difference where they part (or +/-1 for saturation).
  // Paths are segments below the root; a job's path is its queue path plus the job id. A path
  // that names no node compares as an empty, unsaturated node of weight 1.
  double Compare(const std::vector<std::string>& l, const std::vector<std::string>& r,
                 bool use_saturation) const;
  // As Compare without saturation, on what the subtrees hold (HeldShare) instead of the scaled
  // shares. What victim checks use: it is additive, so a move it allows is never allowed back
  // (the scaled share of a parent can drop by more than the moved task when that task leaves
  // its smallest child, which let reclaim take a GPU back and forth every cycle).
  double CompareHeld(const std::vector<std::string>& l, const std::vector<std::string>& r) const;
  // The path of a job's leaf (queue path + job id); empty if the job is unknown.
  std::vector<std::string> JobPath(const std::string& job) const;

  // The share and saturation of the node at `path` (0 / false if there is none).
  double Share(const std::vector<std::string>& path) const;
  // The dominant share of what the jobs below `path` hold together (no scaling).
  double HeldShare(const std::vector<std::string>& path) const;
  bool Saturated(const std::vector<std::string>& path) const;

 private:
  struct Node {
    std::string name;
    double weight = 1;
    int parent = -1;
    std::vector<int> children;
    std::map<std::string, int, std::less<>> child_index;
    bool leaf = false;
    Resource allocated;         // leaves: exact
    Resource request;           // leaves: the job's total request
    std::vector<double> alloc;  // per dimension of dims_ (interior: scaled)
    std::vector<double> held;   // per dimension: what the subtree's jobs hold (not scaled)
    double share = 0;
    double held_share = 0;
    bool saturated = false;
  };

  int Find(const std::vector<std::string>& path) const;  // -1 if absent
  double CompareAt(const std::vector<std::string>& l, const std::vector<std::string>& r,
                   bool use_saturation, bool held) const;
  std::vector<double> Vector(const Resource& r) const;
  double DominantShare(const std::vector<double>& alloc) const;
  bool UpdateDemanding();  // true if it changed
  void UpdateNode(int i);
  void UpdateAll();

  std::vector<std::string> dims_;
  std::vector<double> total_;
  std::vector<bool> demanding_;
  Resource total_allocated_;
  std::vector<Node> nodes_;  // [0] is the root; a parent's index is below its children's
  std::map<std::string, int, std::less<>> jobs_;
};

// The queue path hdrf uses for a queue: the `volcano.sh/hierarchy` and
// `volcano.sh/hierarchy-weights` annotations when both are set (a leading "root" segment is
// dropped), else the spec.parent chain up to the root with each queue's spec.weight. Filled by
// the drf plugin; exposed for tests.
struct HdrfPath {
  std::vector<std::string> segments;
  std::vector<double> weights;
};
// Splits the annotation pair; weights that do not parse count as 1.
HdrfPath HdrfPathFromAnnotations(std::string_view hierarchy, std::string_view weights);

}  // namespace basalt::sched
