#pragma once
// backfill: places BestEffort tasks (no resource request) of admitted, valid jobs on any node that
// passes the plugin predicates, dispatching them once their job is ready.

#include <memory>
#include <string_view>

#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kBackfillActionName = "backfill";
std::unique_ptr<Action> NewBackfillAction();

}  // namespace basalt::sched
