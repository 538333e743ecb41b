#pragma once
// What the job controller checks of a Job before acting on it: the spec problems that the
// validating webhook would have rejected and that would otherwise make the controller create
// nothing, create the wrong pods, or wait forever (no tasks, duplicate task names, minAvailable
// above the replicas, negative counts, a template without containers, unparsable resource
// quantities, dependsOn naming unknown tasks or forming a cycle, volumes without a claim).
// A Job gets past the webhook this way when the webhook is down or not installed (its
// failurePolicy may be Ignore), or was created before the webhook existed.
//
// Each problem names the field it is about, e.g.
//   spec.tasks[1].name: duplicated task name "worker"
//   spec.minAvailable: 5 is greater than the total replicas 2 of the tasks
//
// Pure functions; thread-safe.

#include <string>
#include <vector>

#include "controllers/job/job.h"

namespace basalt::controllers {

// The spec's problems, in field order; empty when the controller can act on the Job.
std::vector<std::string> ValidateJobSpec(const JobSpecView& spec);

// The problems joined into one message for an Event and status.state.message.
std::string JoinProblems(const std::vector<std::string>& problems);

}  // namespace basalt::controllers
