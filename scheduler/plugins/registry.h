#pragma once
// The in-tree plugin set, registered explicitly (never by static initialisers).

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

// Registers: binpack, conformance, drf, gang, nodeorder, overcommit, predicates, priority,
// proportion.
PluginRegistry NewInTreeRegistry();

}  // namespace basalt::sched
