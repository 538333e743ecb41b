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

#include <cstdint>
#include <string>
#include <vector>

#include "controllers/job/model.h"

namespace basalt::controllers {

// The spec's problems, in field order; empty when the controller can act on the Job.
std::vector<std::string> ValidateJobSpec(const api::JobSpec& spec);

// --max-job-pods of vc-controller-manager: the default most pods (replicas summed over the
// tasks) the job controller creates for one Job. Ten times the webhook's default admission
// limit, so that whatever an operator admits after raising the webhook's limit a little is
// still handled; far above real gangs, far below what would exhaust the controller.
inline constexpr int64_t kDefaultMaxJobPods = 100000;

// The size problem of a Job with more than `max_pods` pods in total, empty otherwise. Such a
// Job (admitted while the webhook was down, bypassed or configured with a higher limit) gets no
// pods: building a billion pods' names alone would exhaust the controller's memory.
std::vector<std::string> ValidateJobSize(const api::JobSpec& spec, int64_t max_pods);

// The problems joined into one message for an Event and status.state.message.
std::string JoinProblems(const std::vector<std::string>& problems);

}  // namespace basalt::controllers
