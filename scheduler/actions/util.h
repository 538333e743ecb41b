#pragma once
// Helpers shared by the actions: a priority queue ordered by a session order function, the
// allocate-time predicate (resources first, then the plugins), and node selection.

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/api/fit_error.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

// A priority queue of T*; `before(a, b)` is true if a should pop first. Not thread-safe.
template <typename T>
class PriorityQueue {
 public:
  using Before = std::function<bool(const T&, const T&)>;
  explicit PriorityQueue(Before before) : before_(std::move(before)) {}

  void Push(T* item) {
    items_.push_back(item);
    std::push_heap(items_.begin(), items_.end(), Cmp());
  }
  T* Pop() {
    std::pop_heap(items_.begin(), items_.end(), Cmp());
    T* top = items_.back();
    items_.pop_back();
    return top;
  }
  bool Empty() const { return items_.empty(); }
  size_t Size() const { return items_.size(); }

 private:
  auto Cmp() const {
    return [this](const T* a, const T* b) { return before_(*b, *a); };
  }
  Before before_;
  std::vector<T*> items_;
};

// InitResreq <= FutureIdle (reason "Insufficient <first short resource>"), then the session's
// predicates.
Outcome PredicateForAllocate(const Session& ssn, const TaskInfo& task, const NodeInfo& node);
// The same check as a yes/no answer, recording a failure in `errors` (may be null) for the
// node; a short resource is recorded without building an Outcome (the predicate passes below
// call it for every node).
bool PassesAllocatePredicate(const Session& ssn, const TaskInfo& task, const NodeInfo& node,
                             FitErrors* errors);

// Nodes on which `task` passes PredicateForAllocate (or only the plugin predicates if
// `check_resources` is false), in node-name order; records the failures in `errors`.
std::vector<NodeInfo*> PredicateNodes(const Session& ssn, const TaskInfo& task,
                                      bool check_resources, FitErrors* errors);

// The allocate action's pass (reference §3.2): as PredicateNodes with check_resources, but it
// starts at the session's rotating node index and stops once NumFeasibleNodesToFind nodes
// passed, then advances the index past the nodes it checked. When that was a sample (not every
// node), the session's PreferredNodes for the task are checked as well, outside the rotation.
// The result is in node-name order; `errors` holds the failures of the checked nodes only.
std::vector<NodeInfo*> PredicateSampledNodes(const Session& ssn, const TaskInfo& task,
                                             FitErrors* errors);

// The highest-scoring node (sum of NodeOrder and BatchNodeOrder). Ties go to the first node in
// name order: deliberately deterministic, where Volcano picks at random.
NodeInfo* SelectBestNode(const Session& ssn, const TaskInfo& task,
                         const std::vector<NodeInfo*>& nodes);

// Admitted, valid jobs that are starving and still have pending tasks, grouped by queue: what
// preempt and reclaim work through. `queues` holds each such queue once, in queue order; each
// queue's jobs are in job order. Pointers refer into the session.
struct StarvingJobs {
  PriorityQueue<QueueInfo> queues;
  std::map<std::string, PriorityQueue<JobInfo>> jobs_by_queue;
};
StarvingJobs CollectStarvingJobs(Session& ssn);

// Sets Session::domains_by_capacity for its lifetime (the eviction actions' domain queries).
class ByCapacity {
 public:
  explicit ByCapacity(Session& ssn) : ssn_(ssn) { ssn_.set_domains_by_capacity(true); }
  ~ByCapacity() { ssn_.set_domains_by_capacity(false); }
  ByCapacity(const ByCapacity&) = delete;
  ByCapacity& operator=(const ByCapacity&) = delete;

 private:
  Session& ssn_;
};

// Where the per-task eviction actions (preempt, reclaim) may place a task of `job` and take its
// victims. nullopt: anywhere (the job has no hard networkTopology, or no plugin answers for it).
// Else the HyperNodes its hard constraint allows (holding the job's placed tasks, tier <= the
// highest allowed), judged by capacity, the most idle first; `domains` is empty and
// `unsatisfied` says why when none could hold the gang even with victims gone. A job whose
// partitions (subGroupPolicy) carry their own networkTopology gets an empty answer as well: only
// gangpreempt and gangreclaim place a partition as a unit.
std::optional<JobDomains> HardEvictionDomains(Session& ssn, const JobInfo& job);

// Appends "<action>: <why>" to the job's fit error (what its PodGroup condition says) for a
// job with a hard constraint that evicted nothing: `domains` as HardEvictionDomains gave them.
void NoteHardTopologyFailure(std::string_view action, JobInfo& job, const JobDomains& domains);

}  // namespace basalt::sched
