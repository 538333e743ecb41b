#pragma once
// randomscore: a uniformly random node score (0..100 x weight), the Random baseline of the FGD
// paper. The sequence is seeded by randomscore.seed and the session id, so a replay with the
// same seed and cycles makes the same choices. Arguments: randomscore.weight (float, default 1),
// randomscore.seed (int, default 1).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/framework/plugin.h"

namespace basalt::sched {

inline constexpr std::string_view kRandomScorePluginName = "randomscore";

absl::StatusOr<std::unique_ptr<Plugin>> NewRandomScorePlugin(const Arguments& args);

}  // namespace basalt::sched
