#pragma once
// The CronJob controller (batch.volcano.sh/v1alpha1 CronJob): creates Volcano Jobs on the
// CronJob's schedule and keeps its status (active, lastScheduleTime, lastSuccessfulTime) and
// Job history. The decision is PlanCronJob (sync.h); this executes it: history and Replace
// deletions (UID precondition), the Job creation (AlreadyExists of its own Job counts as
// created), events on the CronJob, one status write (PUT with resourceVersion) when the status
// changed, and a requeue at the next start time. Times come from ControllerContext::clock.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <memory>

#include "absl/status/statusor.h"
#include "controllers/app/controller.h"

namespace basalt::controllers {

absl::StatusOr<std::unique_ptr<Controller>> NewCronJobController(const ControllerContext& ctx);

}  // namespace basalt::controllers
