#pragma once
// binpack: scores nodes higher the fuller they would be after placing the task, so tasks pack
// onto few nodes and large holes stay free for large tasks (reference §4.6).
//
// Arguments: binpack.weight (float, default 1; Basalt accepts decimals such as 0.1, Volcano
// truncates to an integer), binpack.cpu, binpack.memory (default 1), binpack.resources (comma
// list of extra resource names) with binpack.resources.<name> weights (default 1; negative -> 1).

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/task_info.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kBinpackPluginName = "binpack";

struct BinpackWeights {
  double weight = 1;                                     // binpack.weight
  std::map<std::string, double, std::less<>> resources;  // per resource, incl. cpu and memory
};

absl::StatusOr<BinpackWeights> ParseBinpackWeights(const Arguments& args);
absl::StatusOr<std::unique_ptr<Plugin>> NewBinpackPlugin(const Arguments& args);

// The binpack score of `node` for `task`, 0..100 x weight.
double BinpackScore(const TaskInfo& task, const NodeInfo& node, const BinpackWeights& weights);

}  // namespace basalt::sched
