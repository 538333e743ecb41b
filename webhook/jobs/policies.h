#pragma once
// Validation of Job lifecycle policies (spec.policies and spec.tasks[*].policies).
//
// Rules (Volcano's, wording kept where users search for it):
//   - event/events and exitCode are exclusive, and one of them is required;
//   - events must be one of ValidPolicyEvents() (OutOfSync, CommandIssued and PodRunning are
//     internal and rejected);
//   - the action must be one of ValidPolicyActions();
//   - exitCode must not be 0 and must be unique within the list;
//   - an event may appear in only one policy of a list; `*` excludes every other event.
// Deliberate difference: Volcano checks the action only for event-based policies; Basalt also
// checks exitCode policies' actions, since the controller cannot execute an unknown action.

#include <string>
#include <string_view>
#include <vector>

#include "common/util/json.h"
#include "webhook/validation.h"

namespace basalt::webhook {

// The names of api::kPolicyEvents and api::kPolicyActions (the events and actions the job
// controller handles in policies), in that order.
const std::vector<std::string>& ValidPolicyEvents();
const std::vector<std::string>& ValidPolicyActions();

// Validates the policy list `policies` (may be null or absent) found at `path`.
void ValidatePolicies(const json::Value* policies, const FieldPath& path, ErrorList& errors);

}  // namespace basalt::webhook
