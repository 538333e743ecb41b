#pragma once
// The Job status a reconcile writes, computed from the old status (common/api's typed view),
// the phase the state machine chose and the counts the effect produced.
//
// Pure functions; thread-safe.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/batch.h"
#include "common/api/time.h"
#include "controllers/job/model.h"

namespace basalt::controllers {

struct StatusUpdate {
  JobPhase phase = JobPhase::kPending;  // the next phase
  JobCounts counts;                     // after the effect and ApplyBookkeeping
  int32_t spec_min_available = 0;       // status.minAvailable follows spec.minAvailable
  std::map<std::string, std::string> controlled_resources;
  // Set on kill paths: status.runningDuration = last transition − creation (Go duration).
  std::optional<api::Time> creation_timestamp;
  // Why the job cannot progress (status.state.reason, one word, and .message); both empty when
  // nothing is wrong, which clears what an earlier visit wrote.
  std::string reason;
  std::string message;
};

// The status to write, or nullopt when nothing Basalt owns changed (no write, as in Volcano).
// When the phase changes, state.lastTransitionTime = now and the phase's condition is appended
// (an earlier condition of the same phase is moved to the end). Deliberate difference: Volcano
// also moves lastTransitionTime on counter-only changes, so finished jobs that are re-synced
// look as if they finished later and ttlSecondsAfterFinished is postponed; Basalt moves it only
// with the phase, as Kubernetes conditions do. state.reason and state.message are set from the
// update (Volcano never writes them; Basalt says there why a job is stuck, e.g. QueueNotFound).
// Standard conditions (status.typed_conditions) ride on the same write: on a phase change the
// new phase's condition turns True (created if new) and the one that was True turns False,
// both stamped `now`; the True one carries state.reason/message (else the phase name and a
// sentence). A job written before Basalt had them gets its first one at its next phase change.
std::optional<api::JobStatus> NextJobStatus(const api::JobStatus& old, const StatusUpdate& update,
                                            api::Time now);

}  // namespace basalt::controllers
