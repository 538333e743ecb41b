#pragma once
// The job controller: informers on Jobs, Pods, PodGroups, Commands and PriorityClasses whose
// handlers turn changes into requests (controllers/job/requests) for JobReconciler, and the
// worker loop that reconciles jobs. See job_reconciler.h for what a reconcile does.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <memory>

#include "absl/status/statusor.h"
#include "controllers/app/controller.h"

namespace basalt::controllers {

absl::StatusOr<std::unique_ptr<Controller>> NewJobController(const ControllerContext& ctx);

}  // namespace basalt::controllers
