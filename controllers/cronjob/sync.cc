#include "controllers/cronjob/sync.h"

#include <algorithm>
#include <chrono>

#include "common/api/vocabulary.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr int kManyMissed = 100;
// Requeue a little after the start time, so the visit does not come a hair early.
constexpr auto kRequeuePadding = std::chrono::milliseconds(100);

struct Unmet {
  std::optional<api::Time> most_recent;
  int64_t missed = 0;
};

// The most recent start time in (earliest, now], and how many there were (counted up to
// kManyMissed, then the count is only "many").
Unmet MostRecentUnmet(const CronSchedule& s, api::Time earliest, api::Time now) {
  Unmet u;
  std::optional<api::Time> prev;
  std::optional<api::Time> t = s.Next(earliest);
  while (t && *t <= now) {
    u.most_recent = t;
    ++u.missed;
    if (u.missed == kManyMissed && prev) {
      // Too many to walk one by one: jump close to now (a few intervals back) and go on.
      const auto interval = *t - *prev;
      const api::Time jump = now - 10 * interval;
      if (jump > *t) {
        std::optional<api::Time> after = s.Next(jump);
        if (after && *after <= now) {
          u.most_recent = after;
          t = after;
        }
      }
    }
    prev = t;
    t = s.Next(*t);
  }
  return u;
}

Clock::Duration Until(api::Time when, api::Time now) {
  return std::chrono::duration_cast<Clock::Duration>(when - now) + kRequeuePadding;
}

bool ByCreation(const OwnedJob& a, const OwnedJob& b) {
  // A Job without a creation time sorts last, as Volcano's byJobCreationTimestamp.
  if (a.creation_timestamp.has_value() != b.creation_timestamp.has_value()) {
    return a.creation_timestamp.has_value();
  }
  if (a.creation_timestamp != b.creation_timestamp) {
    return *a.creation_timestamp < *b.creation_timestamp;
  }
  return a.name < b.name;
}

void Prune(std::vector<OwnedJob> finished, int32_t limit, std::vector<OwnedJob>& out) {
  if (limit < 0 || static_cast<int64_t>(finished.size()) <= limit) return;
  std::sort(finished.begin(), finished.end(), ByCreation);
  const size_t n = finished.size() - static_cast<size_t>(limit);
  out.insert(out.end(), finished.begin(), finished.begin() + static_cast<ptrdiff_t>(n));
}

}  // namespace

bool JobFinished(const std::string& phase) {
  return phase == api::JobPhaseName(api::JobPhase::kCompleted) ||
         phase == api::JobPhaseName(api::JobPhase::kFailed) ||
         phase == api::JobPhaseName(api::JobPhase::kTerminated);
}

std::string CronJobJobName(std::string_view cron_job_name, api::Time start) {
  const int64_t seconds =
      std::chrono::duration_cast<std::chrono::seconds>(start.time_since_epoch()).count();
  if (seconds % 60 == 0) return fmt::format("{}-{}", cron_job_name, seconds / 60);
  // A start off the minute (`@every 15s`): minutes would name two starts of one minute alike,
  // and the second would be taken for the first (it would silently run once a minute).
  return fmt::format("{}-{}s", cron_job_name, seconds);
}

CronPlan PlanCronJob(const api::CronJob& cj, const std::vector<OwnedJob>& jobs,
                     const absl::StatusOr<CronSchedule>& schedule, api::Time now) {
  CronPlan plan;
  api::CronJobStatus& st = plan.status;
  st = cj.status();

  // 1. Bookkeeping.
  auto in_active = [&](std::string_view uid) {
    return std::any_of(st.active.begin(), st.active.end(),
                       [&](const api::ObjectReference& r) { return r.uid == uid; });
  };
  auto remove_active = [&](std::string_view uid) {
    st.active.erase(std::remove_if(st.active.begin(), st.active.end(),
                                   [&](const api::ObjectReference& r) { return r.uid == uid; }),
                    st.active.end());
  };
  std::vector<OwnedJob> succeeded;
  std::vector<OwnedJob> failed;
  for (const OwnedJob& j : jobs) {
    if (!JobFinished(j.phase)) {
      if (!in_active(j.uid)) {
        st.active.push_back(api::ObjectReference{std::string(api::kBatchApiVersion), "Job",
                                                 std::string(cj.namespace_name()), j.name, j.uid,
                                                 "", ""});
      }
      continue;
    }
    if (in_active(j.uid)) {
      remove_active(j.uid);
      plan.events.push_back({false, "SawCompletedJob",
                             fmt::format("Saw completed job: {}, status: {}", j.name, j.phase)});
    }
    if (j.phase == api::JobPhaseName(api::JobPhase::kCompleted)) {
      if (j.last_transition_time &&
          (!st.last_successful_time || *j.last_transition_time > *st.last_successful_time)) {
        st.last_successful_time = j.last_transition_time;
      }
      succeeded.push_back(j);
    } else {
      failed.push_back(j);
    }
  }
  // Active references to Jobs that are gone.
  st.active.erase(std::remove_if(st.active.begin(), st.active.end(),
                                 [&](const api::ObjectReference& r) {
                                   return std::none_of(
                                       jobs.begin(), jobs.end(),
                                       [&](const OwnedJob& j) { return j.uid == r.uid; });
                                 }),
                  st.active.end());

  // 2. History limits.
  Prune(std::move(succeeded), cj.spec().successful_jobs_history_limit, plan.delete_jobs);
  Prune(std::move(failed), cj.spec().failed_jobs_history_limit, plan.delete_jobs);

  // 3. The schedule.
  if (cj.spec().suspend) return plan;
  if (!schedule.ok()) {
    plan.events.push_back({true, "UnparseableSchedule",
                           fmt::format("unparseable schedule \"{}\" or time zone: {}",
                                       cj.spec().schedule, MessageOf(schedule.status()))});
    return plan;
  }
  const CronSchedule& s = *schedule;
  api::Time earliest = st.last_schedule_time.value_or(cj.creation_timestamp().value_or(now));
  if (cj.spec().starting_deadline_seconds) {
    const api::Time deadline = now - std::chrono::seconds(*cj.spec().starting_deadline_seconds);
    earliest = std::max(earliest, deadline);
  }
  const Unmet unmet = MostRecentUnmet(s, earliest, now);
  if (std::optional<api::Time> next = s.Next(now)) plan.requeue_after = Until(*next, now);
  if (!unmet.most_recent) return plan;
  if (unmet.missed >= kManyMissed) {
    plan.events.push_back({true, "TooManyMissedTimes",
                           "too many missed start times (> 100): only the most recent is "
                           "started. Set or decrease .spec.startingDeadlineSeconds or check "
                           "clock skew"});
  }
  const api::Time start = *unmet.most_recent;
  const std::string name = CronJobJobName(cj.name(), start);
  const bool done = (st.last_schedule_time && *st.last_schedule_time == start) ||
                    std::any_of(st.active.begin(), st.active.end(),
                                [&](const api::ObjectReference& r) { return r.name == name; });
  if (done) return plan;
  if (cj.spec().concurrency_policy == api::kConcurrencyForbid && !st.active.empty()) {
    plan.events.push_back({true, "JobAlreadyActive",
                           fmt::format("Not starting job for {} because another job is still "
                                       "active (concurrencyPolicy Forbid)",
                                       s.FormatInZone(start))});
    return plan;
  }
  if (cj.spec().concurrency_policy == api::kConcurrencyReplace) plan.replace_jobs = st.active;
  plan.start = start;
  return plan;
}

api::Object BuildCronJobJob(const api::CronJob& cj, const CronSchedule& schedule, api::Time start) {
  api::Object job;
  job.SetApiVersionKind(api::kBatchApiVersion, "Job");
  job.SetName(CronJobJobName(cj.name(), start));
  job.SetNamespace(cj.namespace_name());
  const json::Value* tmpl = cj.JobTemplate();
  if (tmpl != nullptr) {
    if (const json::Value* meta = json::Find(*tmpl, "metadata"); meta != nullptr) {
      for (std::string_view key : {"labels", "annotations"}) {
        const json::Value* m = json::Find(*meta, key);
        if (m == nullptr || !m->IsObject()) continue;
        for (const auto& [k, v] : m->GetObject()) {
          if (!v.IsString()) continue;
          if (key == "labels") {
            job.SetLabel(json::AsView(k), json::AsView(v));
          } else {
            job.SetAnnotation(json::AsView(k), json::AsView(v));
          }
        }
      }
    }
    if (const json::Value* spec = json::Find(*tmpl, "spec"); spec != nullptr) {
      job.SetPath({"spec"}, *spec);
    }
  }
  job.SetAnnotation(api::kCronJobScheduledTimestampAnnotation, schedule.FormatInZone(start));
  job.SetOwnerReferences(
      {api::ControllerRef(api::kBatchApiVersion, "CronJob", cj.name(), cj.uid())});
  return job;
}

}  // namespace basalt::controllers
