#pragma once
// example_zone: the worked example of docs/plugins.md, a small topology-aware scoring plugin.
// It keeps a job's tasks in one zone: a node scores higher the larger the share of the job's
// already placed tasks (earlier cycles, or earlier in this cycle) that sit in the node's zone,
// so a gang that started in zone A fills zone A before it spills into zone B (fewer cross-zone
// hops for its collective traffic). A node without the zone label, or a job with nothing placed
// yet, scores 0: the other scoring plugins decide.
//
// Arguments: example_zone.weight (float, default 1; the score is 0..100 x weight),
// example_zone.label (string, default "topology.kubernetes.io/zone").
//
// Not part of any default configuration: it runs only when a scheduler configuration names it.
// Thread-compatible, like every plugin: built for one session and used from its thread.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kExampleZonePluginName = "example_zone";
inline constexpr std::string_view kDefaultZoneLabel = "topology.kubernetes.io/zone";

absl::StatusOr<std::unique_ptr<Plugin>> NewExampleZonePlugin(const Arguments& args);

}  // namespace basalt::sched
