#pragma once
// The JobFlow and JobTemplate controllers (flow.volcano.sh/v1alpha1), as Volcano v1.15's
// jobflow-controller and jobtemplate-controller, in one Controller named "jobflow":
//   - a JobFlow's Job for flow F is "<jobflow>-<F>", made from JobTemplate F's spec with the
//     label and annotation volcano.sh/createdByJobTemplate=<namespace>.<F> and a controller
//     owner reference to the JobFlow, once every dependsOn.targets Job is Completed (sync.h);
//     AlreadyExists of its own Job counts as created, so a restart makes no duplicate;
//   - the JobFlow's status (job lists, jobStatusList, conditions, state.phase) is written when
//     it changed; with jobRetainPolicy delete, a Succeed flow's Jobs are deleted;
//   - a JobTemplate's status.jobDependsOnList names the Jobs carrying its label.
// Without the flow.volcano.sh CRDs (e.g. Volcano's own CRD set), Run() logs once and checks
// again every 30 s; HasSynced() is true meanwhile so the manager stays ready.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <memory>

#include "absl/status/statusor.h"
#include "controllers/app/controller.h"

namespace basalt::controllers {

absl::StatusOr<std::unique_ptr<Controller>> NewJobFlowController(const ControllerContext& ctx);

}  // namespace basalt::controllers
