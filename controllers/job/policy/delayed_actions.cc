#include "controllers/job/policy/delayed_actions.h"

#include <algorithm>

namespace basalt::controllers {
namespace {

bool IsInternal(Action a) { return a == Action::kSyncJob || a == Action::kEnqueueJob; }

}  // namespace

ActionScope ScopeOf(Action action) {
  switch (action) {
    case Action::kRestartTask:
      return ActionScope::kTask;
    case Action::kRestartPod:
      return ActionScope::kPod;
    case Action::kRestartPartition:
      return ActionScope::kPartition;
    default:
      return ActionScope::kJob;
  }
}

bool DelayedActions::Arm(const JobRequest& request, std::string_view pod_uid,
                         std::optional<int32_t> partition, const ResolvedAction& action,
                         Clock::TimePoint now) {
  for (const auto& d : pending_) {
    if (d.pod == request.pod && d.action.action_name == action.action_name) return false;
  }
  DelayedAction d;
  d.pod = request.pod;
  d.pod_uid = std::string(pod_uid);
  d.task = request.task;
  d.partition = partition;
  d.event = request.event;
  d.action = action;
  d.due = now + action.delay;
  pending_.push_back(std::move(d));
  return true;
}

void DelayedActions::OnPodEvent(const JobRequest& request, std::string_view pod_uid) {
  if (request.pod.empty()) return;
  std::erase_if(pending_, [&](const DelayedAction& d) {
    if (d.pod != request.pod) return false;
    if (d.event == Event::kPodPending && request.event != Event::kPodPending &&
        d.pod_uid == pod_uid) {
      return true;
    }
    return request.event == Event::kPodRunning &&
           (d.event == Event::kPodFailed || d.event == Event::kPodEvicted);
  });
}

void DelayedActions::OnActionExecuted(Action action, const JobRequest& request,
                                      std::optional<int32_t> partition) {
  if (IsInternal(action)) return;
  const ActionScope scope = ScopeOf(action);
  std::erase_if(pending_, [&](const DelayedAction& d) {
    if (ScopeOf(d.action.action) != scope) return false;
    switch (scope) {
      case ActionScope::kJob:
        return true;
      case ActionScope::kTask:
        return d.task == request.task;
      case ActionScope::kPod:
        return d.pod == request.pod;
      case ActionScope::kPartition:
        return d.task == request.task && d.partition == partition;
    }
    return false;
  });
}

std::vector<DelayedAction> DelayedActions::TakeDue(Clock::TimePoint now) {
  std::vector<DelayedAction> due;
  auto it = std::stable_partition(pending_.begin(), pending_.end(),
                                  [&](const DelayedAction& d) { return d.due > now; });
  due.assign(std::make_move_iterator(it), std::make_move_iterator(pending_.end()));
  pending_.erase(it, pending_.end());
  std::stable_sort(due.begin(), due.end(),
                   [](const DelayedAction& a, const DelayedAction& b) { return a.due < b.due; });
  return due;
}

std::optional<Clock::TimePoint> DelayedActions::NextDue() const {
  std::optional<Clock::TimePoint> next;
  for (const auto& d : pending_) {
    if (!next || d.due < *next) next = d.due;
  }
  return next;
}

}  // namespace basalt::controllers
