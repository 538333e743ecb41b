#pragma once
// Actions a lifecycle policy delays with its `timeout`, for one Job. The reconcile loop arms an
// action when ResolvePolicy returns a non-zero delay, feeds every later pod event through
// OnPodEvent (which cancels delays the event makes moot), re-enqueues the job at NextDue(),
// executes TakeDue() and reports executed actions to OnActionExecuted (which cancels the other
// delayed actions of the same scope). Rules follow Volcano (§2.3):
//   - the same pod and action are armed once;
//   - a later non-PodPending event of a pod cancels its PodPending delays (same pod UID);
//   - PodRunning cancels the pod's PodFailed / PodEvicted delays;
//   - an executed action other than SyncJob/EnqueueJob cancels delays of its scope: job-level
//     actions cancel all job-level delays, RestartTask those of the task, RestartPod those of
//     the pod, RestartPartition those of the partition.
//
// Thread-compatible: one job's requests are handled by one worker.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/util/clock.h"
#include "controllers/job/policy/policy.h"

namespace basalt::controllers {

enum class ActionScope { kJob, kTask, kPod, kPartition };
ActionScope ScopeOf(Action action);

struct DelayedAction {
  std::string pod;
  std::string pod_uid;
  std::string task;
  std::optional<int32_t> partition;
  Event event = Event::kNone;  // the event that armed it
  ResolvedAction action;
  Clock::TimePoint due;
};

class DelayedActions {
 public:
  // Arms `action` (whose delay is > 0) for the request's pod at now + delay. Returns false, and
  // arms nothing, when the same pod already has the same action armed.
  bool Arm(const JobRequest& request, std::string_view pod_uid, std::optional<int32_t> partition,
           const ResolvedAction& action, Clock::TimePoint now);

  // Cancels the delays an incoming pod event makes moot (see the class comment).
  void OnPodEvent(const JobRequest& request, std::string_view pod_uid);

  // Cancels the other delays of the scope of an action that just executed for `request`.
  void OnActionExecuted(Action action, const JobRequest& request,
                        std::optional<int32_t> partition = std::nullopt);

  // Removes and returns the actions due at `now`, earliest first.
  std::vector<DelayedAction> TakeDue(Clock::TimePoint now);

  // The earliest due time, if anything is armed.
  std::optional<Clock::TimePoint> NextDue() const;

  const std::vector<DelayedAction>& pending() const { return pending_; }

 private:
  std::vector<DelayedAction> pending_;
};

}  // namespace basalt::controllers
