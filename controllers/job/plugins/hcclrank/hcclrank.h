#pragma once
// The hcclrank job plugin (Volcano's distributed-framework/hcclrank, for Huawei Ascend HCCL
// collectives): every pod of the master and worker tasks gets the annotation
// `hccl/rankIndex` = its global rank: a RANK env value already in the pod's containers if
// there is one, else its index on the master task and master replicas + index on the worker
// task. A pod that already carries the annotation is left alone; pods of other tasks too. No
// objects.
//
// Flags: --master (master), --worker (worker).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/plugin.h"

namespace basalt::controllers {

inline constexpr std::string_view kHcclRankPluginName = api::kHcclRankPlugin;
inline constexpr std::string_view kHcclRankAnnotation = "hccl/rankIndex";

absl::StatusOr<std::unique_ptr<JobPlugin>> NewHcclRankPlugin(const std::vector<std::string>& args);

}  // namespace basalt::controllers
