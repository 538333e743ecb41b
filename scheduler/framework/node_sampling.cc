#include "scheduler/framework/node_sampling.h"

#include <algorithm>

namespace basalt::sched {

namespace {
// Kubernetes' baseline for the adaptive percentage.
constexpr int64_t kBaselinePercentage = 50;
}  // namespace

int64_t NumFeasibleNodesToFind(const NodeSamplingOptions& options, int64_t num_nodes) {
  const int64_t minimum = options.minimum_feasible_nodes;
  if (num_nodes <= minimum || options.percentage_nodes_to_find >= 100) return num_nodes;
  int64_t percentage = options.percentage_nodes_to_find;
  if (percentage <= 0) {
    percentage = std::max<int64_t>(kBaselinePercentage - num_nodes / 125,
                                   options.minimum_percentage_nodes_to_find);
  }
  return std::max({num_nodes * percentage / 100, minimum, int64_t{1}});
}

}  // namespace basalt::sched
