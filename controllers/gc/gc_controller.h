#pragma once
// The garbage collector deletes finished Jobs whose spec.ttlSecondsAfterFinished has passed:
// phase Completed, Failed, Terminated or Aborted (deliberate difference: Volcano skips
// Aborted jobs, issue #4736, which then pile up), counted from status.state.lastTransitionTime.
// A job not yet expired is revisited when it will be. An expired job is re-read from the API
// server and re-checked (its phase or TTL may have changed) before it is deleted with
// propagationPolicy Foreground and a UID precondition, so a new Job of the same name is never
// deleted by mistake.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <chrono>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "common/api/time.h"
#include "controllers/app/controller.h"

namespace basalt::controllers {

// When the Job `job` (a document) expires, or nullopt when it is not subject to TTL
// collection (no TTL, not finished, or no lastTransitionTime).
std::optional<api::Time> JobExpiry(const json::Value& job);

absl::StatusOr<std::unique_ptr<Controller>> NewGarbageCollector(const ControllerContext& ctx);

}  // namespace basalt::controllers
