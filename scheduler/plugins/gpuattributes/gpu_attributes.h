#pragma once
// gpuattributes (Basalt extension): matches what a task says about the GPU it needs with the
// labels GPU feature discovery puts on nodes, so that users need no per-pool nodeSelectors.
//
//   Predicate  a pod with gpu.basalt.dev/min-memory, max-memory, products or families
//              annotations (common/api/gpu_attributes.h) goes only to nodes whose
//              nvidia.com/gpu.memory / gpu.product / gpu.family labels satisfy them; a refused
//              node's reason names the annotation and its value, so a gang that cannot run
//              says which attribute no node has. A pod whose annotations are invalid (it
//              bypassed the webhook) goes nowhere and says why.
//   BatchNodeOrder  among the feasible nodes, the smallest sufficient GPU wins: a node scores
//              weight * 100 * (smallest nvidia.com/gpu.memory among the candidates) / (its own),
//              plus weight * 100 if its product is in gpu.basalt.dev/preferred-products. This
//              applies to pods with any gpu.basalt.dev/ requirement and to pods whose required
//              node affinity names nvidia.com/gpu.memory or nvidia.com/gpu.product (that
//              affinity itself is checked by the predicates plugin, as in Kubernetes).
//
// Arguments: gpuattributes.weight (default 10: one GPU-memory step outweighs binpack and
// nodeorder's spreading, which are 0..100 each). Single-threaded, like its session.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kGpuAttributesPluginName = "gpuattributes";

absl::StatusOr<std::unique_ptr<Plugin>> NewGpuAttributesPlugin(const Arguments& args);

}  // namespace basalt::sched
