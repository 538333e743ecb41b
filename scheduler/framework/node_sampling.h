#pragma once
// Node sampling for the allocate action's predicate pass (reference §3.2, Volcano's
// --percentage-nodes-to-find, --minimum-feasible-nodes, --minimum-percentage-nodes-to-find):
// in a large cluster a task's predicates stop once enough feasible nodes were found, and each
// pass starts where the previous one stopped, so successive tasks (and cycles) spread over
// every node instead of always filling the first ones in name order.
//
// NodeSampler holds the options and the rotating start index, which lives across cycles (the
// scheduler's main loop owns one). Not thread-safe: used by the scheduling thread only.

#include <cstddef>
#include <cstdint>

namespace basalt::sched {

struct NodeSamplingOptions {
  // Percentage of the nodes to find feasible; 0 (or less) is adaptive: 50 - nodes/125, at least
  // minimum_percentage_nodes_to_find. >= 100 checks every node.
  int percentage_nodes_to_find = 0;
  // Clusters of at most this many nodes are never sampled; never fewer are looked for.
  int minimum_feasible_nodes = 100;
  int minimum_percentage_nodes_to_find = 5;
};

// How many feasible nodes a predicate pass over `num_nodes` nodes looks for:
//   num_nodes                       if num_nodes <= minimum_feasible_nodes or percentage >= 100
//   max(num_nodes * pct / 100, minimum_feasible_nodes) otherwise, pct as described above.
// E.g. with the defaults: 1000 nodes -> 42% -> 420; 5000 nodes -> 10% -> 500.
int64_t NumFeasibleNodesToFind(const NodeSamplingOptions& options, int64_t num_nodes);

class NodeSampler {
 public:
  explicit NodeSampler(NodeSamplingOptions options = {}) : options_(options) {}

  const NodeSamplingOptions& options() const { return options_; }
  // Where the next pass over `num_nodes` nodes starts.
  size_t Start(size_t num_nodes) const { return num_nodes == 0 ? 0 : next_ % num_nodes; }
  // Records that a pass starting at Start(num_nodes) checked `processed` nodes.
  void Advance(size_t processed, size_t num_nodes) {
    if (num_nodes != 0) next_ = (Start(num_nodes) + processed) % num_nodes;
  }

 private:
  NodeSamplingOptions options_;
  size_t next_ = 0;
};

}  // namespace basalt::sched
