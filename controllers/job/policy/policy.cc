#include "controllers/job/policy/policy.h"

#include <algorithm>
#include <vector>

#include "common/util/duration.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

std::string DescribePolicy(const LifecyclePolicy& p) {
  std::string trigger;
  for (Event e : p.events) {
    if (!trigger.empty()) trigger += ",";
    trigger += EventName(e);
  }
  if (trigger.empty() && p.exit_code) trigger = fmt::format("exitCode {}", *p.exit_code);
  std::string out = fmt::format("{} -> {}", trigger, p.action);
  if (p.timeout) out += fmt::format(" after {}", FormatGoDuration(*p.timeout));
  return out;
}

std::string DescribeTrigger(const api::Job& job, const JobRequest& r) {
  std::string what =
      r.event == Event::kNone ? std::string("sync") : std::string(EventName(r.event));
  if (r.exit_code) what += fmt::format(" (exit code {})", *r.exit_code);
  if (!r.pod.empty()) {
    what += fmt::format(" of pod {}/{}", job.namespace_name(), r.pod);
    if (!r.task.empty()) what += fmt::format(" (task {})", r.task);
  } else if (!r.task.empty()) {
    what += fmt::format(" of task {}", r.task);
  }
  return what;
}

ResolvedAction Simple(Action action, PolicySource source, std::string cause) {
  ResolvedAction r;
  r.action = action;
  r.action_name = std::string(ActionName(action));
  r.source = source;
  r.cause = std::move(cause);
  return r;
}

std::optional<ResolvedAction> FirstMatch(const std::vector<LifecyclePolicy>& policies,
                                         const api::Job& job, const JobRequest& request,
                                         PolicySource source) {
  for (const auto& p : policies) {
    if (!PolicyMatches(p, request)) continue;
    ResolvedAction r;
    r.action = ParseAction(p.action);
    r.action_name = p.action;
    r.delay = p.timeout.value_or(std::chrono::milliseconds(0));
    r.source = source;
    r.cause = fmt::format("{} matched {} policy {}", DescribeTrigger(job, request),
                          source == PolicySource::kTaskPolicy ? "task" : "job", DescribePolicy(p));
    return r;
  }
  return std::nullopt;
}

}  // namespace

std::string_view PolicySourceName(PolicySource source) {
  switch (source) {
    case PolicySource::kCommand:
      return "command";
    case PolicySource::kInternal:
      return "internal";
    case PolicySource::kStaleJob:
      return "stale-job";
    case PolicySource::kStaleVersion:
      return "stale-version";
    case PolicySource::kTaskPolicy:
      return "task-policy";
    case PolicySource::kJobPolicy:
      return "job-policy";
    case PolicySource::kDefault:
      return "default";
  }
  return "default";
}

std::string_view ResolvedAction::event_reason() const {
  return action == Action::kSyncJob ? std::string_view() : std::string_view("ExecuteAction");
}

std::string ResolvedAction::event_message() const {
  if (action == Action::kSyncJob) return {};
  if (delay.count() > 0) {
    return fmt::format("Execute action {} after {}", action_name, FormatGoDuration(delay));
  }
  return fmt::format("Start to execute action {}", action_name);
}

bool PolicyMatches(const LifecyclePolicy& policy, const JobRequest& request) {
  if (!policy.events.empty() && request.event != Event::kNone) {
    bool listed =
        std::find(policy.events.begin(), policy.events.end(), request.event) !=
            policy.events.end() ||
        std::find(policy.events.begin(), policy.events.end(), Event::kAny) != policy.events.end();
    // A pod is Pending for a while on every start: only a timeout makes PodPending actionable.
    if (listed && (request.event != Event::kPodPending || policy.timeout)) return true;
  }
  return policy.exit_code && request.exit_code && *policy.exit_code == *request.exit_code;
}

ResolvedAction ResolvePolicy(const api::Job& job, const JobRequest& request) {
  if (request.action) {
    ResolvedAction r;
    r.action = ParseAction(*request.action);
    r.action_name = *request.action;
    r.source = PolicySource::kCommand;
    r.cause = fmt::format("command requested action {}", *request.action);
    return r;
  }
  if (request.event == Event::kOutOfSync || request.event == Event::kCommandIssued ||
      request.event == Event::kPodRunning) {
    return Simple(Action::kSyncJob, PolicySource::kInternal,
                  fmt::format("{}: internal event, sync", DescribeTrigger(job, request)));
  }
  if (!request.job_uid.empty() && !job.uid().empty() && request.job_uid != job.uid()) {
    return Simple(Action::kSyncJob, PolicySource::kStaleJob,
                  fmt::format("{} belongs to job UID {}, not {}: sync",
                              DescribeTrigger(job, request), request.job_uid, job.uid()));
  }
  if (request.job_version && *request.job_version < job.status().version) {
    return Simple(
        Action::kSyncJob, PolicySource::kStaleVersion,
        fmt::format("{} is from job version {} < {}: policies ignored, sync",
                    DescribeTrigger(job, request), *request.job_version, job.status().version));
  }
  if (!request.task.empty()) {
    if (const api::TaskSpec* task = job.spec().FindTask(request.task)) {
      if (auto r = FirstMatch(task->policies, job, request, PolicySource::kTaskPolicy)) return *r;
    }
  }
  if (auto r = FirstMatch(job.spec().policies, job, request, PolicySource::kJobPolicy)) return *r;
  return Simple(Action::kSyncJob, PolicySource::kDefault,
                fmt::format("{}: no policy matched, sync", DescribeTrigger(job, request)));
}

}  // namespace basalt::controllers
