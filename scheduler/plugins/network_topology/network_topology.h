#pragma once
// network-topology-aware: keeps a gang inside one network domain (HyperNode) as its PodGroup's
// spec.networkTopology asks, through the session's JobDomains extension point (the allocate
// action tries the gang in each domain returned, all or nothing per domain):
//
//   mode: hard   the gang goes into one HyperNode of tier <= highestTierAllowed (or of the
//                tier named by highestTierName; neither: any tier), or is not placed at all;
//                the PodGroup then says why, naming the tier and the best domain found
//                ("hard tier 1: no HyperNode of tier <= 1 has 8 free nvidia.com/gpu; best s3
//                has 6").
//   mode: soft   as few domains as possible: one HyperNode of the lowest tier that fits, then
//                the next tier up, and finally the whole cluster.
//
// A job with tasks already placed stays in the lowest HyperNode that holds them all. Within a
// tier, domains are tried fullest first (HyperNode-level binpack: the free capacity left after
// the gang, relative to the domain's allocatable, smallest first), so a small job does not split
// a free switch. Domains whose idle resources sum to less than the gang needs are not tried.
//
// Node order (BatchNodeOrder): nodes closer to the job's placed tasks score higher, weight x 100
// for the same tier-1 HyperNode, scaled down per tier up (Volcano's LCA-tier score), so a gang
// fills one switch before it spills into the next.
//
// Arguments: `weight` (Volcano's, default 1, >= 0): the node-order score's weight.
// Jobs without networkTopology are not constrained. Single-threaded, like its session.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kNetworkTopologyPluginName = "network-topology-aware";

absl::StatusOr<std::unique_ptr<Plugin>> NewNetworkTopologyPlugin(const Arguments& args);

}  // namespace basalt::sched
