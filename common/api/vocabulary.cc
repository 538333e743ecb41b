#include "common/api/vocabulary.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace basalt::api {
namespace {

struct PhaseName {
  JobPhase phase;
  std::string_view name;
};
constexpr std::array<PhaseName, 10> kPhaseNames = {{
    {JobPhase::kPending, "Pending"},
    {JobPhase::kAborting, "Aborting"},
    {JobPhase::kAborted, "Aborted"},
    {JobPhase::kRunning, "Running"},
    {JobPhase::kRestarting, "Restarting"},
    {JobPhase::kCompleting, "Completing"},
    {JobPhase::kCompleted, "Completed"},
    {JobPhase::kTerminating, "Terminating"},
    {JobPhase::kTerminated, "Terminated"},
    {JobPhase::kFailed, "Failed"},
}};

struct ActionNameEntry {
  Action action;
  std::string_view name;
};
constexpr std::array<ActionNameEntry, 14> kActionNames = {{
    {Action::kAbortJob, "AbortJob"},
    {Action::kRestartJob, "RestartJob"},
    {Action::kRestartTask, "RestartTask"},
    {Action::kRestartPod, "RestartPod"},
    {Action::kRestartPartition, "RestartPartition"},
    {Action::kTerminateJob, "TerminateJob"},
    {Action::kCompleteJob, "CompleteJob"},
    {Action::kResumeJob, "ResumeJob"},
    {Action::kSyncJob, "SyncJob"},
    {Action::kEnqueueJob, "EnqueueJob"},
    {Action::kSyncQueue, "SyncQueue"},
    {Action::kOpenQueue, "OpenQueue"},
    {Action::kCloseQueue, "CloseQueue"},
    {Action::kOther, "Unknown"},
}};

struct EventNameEntry {
  JobEvent event;
  std::string_view name;
};
constexpr std::array<EventNameEntry, 12> kEventNames = {{
    {JobEvent::kNone, ""},
    {JobEvent::kAny, "*"},
    {JobEvent::kPodFailed, "PodFailed"},
    {JobEvent::kPodEvicted, "PodEvicted"},
    {JobEvent::kPodPending, "PodPending"},
    {JobEvent::kPodRunning, "PodRunning"},
    {JobEvent::kUnknown, "Unknown"},
    {JobEvent::kTaskCompleted, "TaskCompleted"},
    {JobEvent::kTaskFailed, "TaskFailed"},
    {JobEvent::kOutOfSync, "OutOfSync"},
    {JobEvent::kCommandIssued, "CommandIssued"},
    {JobEvent::kJobUpdated, "JobUpdated"},
}};

template <typename List>
bool ContainsName(const List& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

}  // namespace

std::string_view JobPhaseName(JobPhase phase) {
  for (const auto& e : kPhaseNames) {
    if (e.phase == phase) return e.name;
  }
  return "Pending";
}

JobPhase ParseJobPhase(std::string_view name) {
  for (const auto& e : kPhaseNames) {
    if (e.name == name) return e.phase;
  }
  return JobPhase::kPending;
}

bool IsFinishedPhase(JobPhase phase) {
  return phase == JobPhase::kCompleted || phase == JobPhase::kFailed ||
         phase == JobPhase::kTerminated || phase == JobPhase::kAborted;
}

std::string_view ActionName(Action action) {
  for (const auto& e : kActionNames) {
    if (e.action == action) return e.name;
  }
  return "Unknown";
}

Action ParseAction(std::string_view name) {
  for (const auto& e : kActionNames) {
    if (e.action != Action::kOther && e.name == name) return e.action;
  }
  return Action::kOther;
}

std::string_view EventName(JobEvent event) {
  for (const auto& e : kEventNames) {
    if (e.event == event) return e.name;
  }
  return "";
}

std::optional<JobEvent> ParseEvent(std::string_view name) {
  for (const auto& e : kEventNames) {
    if (e.name == name) return e.event;
  }
  return std::nullopt;
}

bool IsSupportedJobPlugin(std::string_view name) { return ContainsName(kJobPlugins, name); }

bool IsPodGroupAdmitted(std::string_view phase) {
  return phase == kPodGroupInqueue || phase == kPodGroupRunning || phase == kPodGroupUnknown ||
         phase == kPodGroupCompleted;
}

}  // namespace basalt::api
