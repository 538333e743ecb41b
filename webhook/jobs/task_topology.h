#pragma once
// Admission check of a Job's task-topology annotations (volcano.sh/task-topology-affinity,
// -anti-affinity, -task-order; common/api/task_topology.h): every name must be one of the Job's
// tasks, appear once per group and once in the order, and no two tasks may be both affine and
// anti-affine. Volcano admits such a Job and its scheduler then silently ignores the whole task
// topology; Basalt refuses it with a message naming the annotation and the rule. Stateless;
// thread-safe. Checked on CREATE only: the job controller copies the annotations to the PodGroup
// when it creates it, so a later edit of the Job's annotations changes nothing.

#include "common/api/field_reader.h"
#include "common/util/json.h"
#include "webhook/validation.h"

namespace basalt::webhook {

// `job` is the Job object under review. Errors are reported under
// metadata.annotations[<annotation>].
void ValidateTaskTopologyAnnotations(const json::Value& job, ErrorList& errors);
// The same, through a reader over the Job (the validator's own).
void ValidateTaskTopologyAnnotations(api::FieldReader& job, ErrorList& errors);

}  // namespace basalt::webhook
