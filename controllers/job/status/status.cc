#include "controllers/job/status/status.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/util/duration.h"

namespace basalt::controllers {
namespace {

constexpr std::string_view kConditionTrue = "True";
constexpr std::string_view kConditionFalse = "False";

api::Condition* FindTyped(api::JobStatus& s, std::string_view type) {
  for (api::Condition& c : s.typed_conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace

std::optional<api::JobStatus> NextJobStatus(const api::JobStatus& old, const StatusUpdate& u,
                                            api::Time now) {
  api::JobStatus next = old;
  const std::string phase(JobPhaseName(u.phase));
  const JobCounts& c = u.counts;
  static_cast<api::JobStatusCounts&>(next) = c;
  next.min_available = u.spec_min_available;
  next.controlled_resources = u.controlled_resources;
  next.state.reason = u.reason;
  next.state.message = u.message;
  if (old.state.phase != phase) {
    next.state.phase = phase;
    next.state.last_transition_time = now;
    auto& conds = next.conditions;
    conds.erase(std::remove_if(conds.begin(), conds.end(),
                               [&](const api::JobCondition& x) { return x.status == phase; }),
                conds.end());
    conds.push_back(api::JobCondition{phase, now});
    // The standard conditions: the new phase's turns True, the one that was True turns False.
    for (api::Condition& c : next.typed_conditions) {
      if (c.status == kConditionTrue && c.type != phase) {
        c.status = kConditionFalse;
        c.reason = phase;
        c.message = absl::StrCat("The job left ", c.type, " for ", phase, ".");
        c.last_transition_time = now;
      }
    }
    api::Condition* cur = FindTyped(next, phase);
    if (cur == nullptr) {
      next.typed_conditions.push_back(api::Condition{});
      cur = &next.typed_conditions.back();
      cur->type = phase;
    }
    cur->status = kConditionTrue;
    cur->last_transition_time = now;
  }
  // The True condition says why, as state does; reason and message may change within a phase
  // (no transition then).
  if (api::Condition* cur = FindTyped(next, phase);
      cur != nullptr && cur->status == kConditionTrue) {
    cur->reason = u.reason.empty() ? phase : u.reason;
    cur->message = u.message.empty() ? absl::StrCat("The job is ", phase, ".") : u.message;
  }
  if (u.creation_timestamp && next.state.last_transition_time) {
    auto d = std::chrono::duration_cast<std::chrono::milliseconds>(
        *next.state.last_transition_time - *u.creation_timestamp);
    // metav1.Time has whole seconds: keep the duration whole too.
    next.running_duration = FormatGoDuration(std::chrono::duration_cast<std::chrono::seconds>(d));
  }
  if (next == old) return std::nullopt;
  return next;
}

}  // namespace basalt::controllers
