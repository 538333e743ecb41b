#pragma once
// nodegroup: node groups are sets of nodes labelled volcano.sh/nodegroup-name=<group>.
//
//   Queue affinity (Volcano's): a task's queue (its job's) with
//     spec.affinity.nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution: [groups]
//   goes only to nodes of those groups; nodeGroupAntiAffinity.required... never to them. The
//   preferred lists score: +100 for a node of a preferred group, -100 for a node of an
//   anti-preferred one (Basalt's reading; Volcano's scoring of the preferred lists differs
//   between releases).
//   Task annotation (Basalt's reading of the requirements article): a pod annotated
//     scheduling.volcano.sh/node-group: <group>
//   goes only to nodes of that group, whatever its queue says in addition.
//
// A node outside the groups is refused with a reason naming the group and the rule, so a gang
// that cannot run says so in its fit errors. Single-threaded, like its session.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kNodeGroupPluginName = "nodegroup";

absl::StatusOr<std::unique_ptr<Plugin>> NewNodeGroupPlugin(const Arguments& args);

}  // namespace basalt::sched
