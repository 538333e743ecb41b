#pragma once
// The CronJob controller's decision for one visit, as a pure function of the CronJob, the Jobs
// it owns (from the cache, plus active ones confirmed with a live read) and the time:
//
//   1. bookkeeping: finished owned Jobs (Completed, Failed, Terminated) leave status.active;
//      lastSuccessfulTime = the newest Completed Job's state.lastTransitionTime; unfinished
//      owned Jobs missing from status.active are added (a crash between creating a Job and
//      writing the status); active references to Jobs that are gone are dropped;
//   2. history: finished Jobs beyond successfulJobsHistoryLimit (Completed) and
//      failedJobsHistoryLimit (Failed and Terminated; deliberate difference: Volcano keeps
//      Terminated Jobs forever) are deleted, oldest first;
//   3. unless suspended, the most recent start time not yet met (after lastScheduleTime, or
//      the creation time, and no earlier than now - startingDeadlineSeconds) is started:
//      Forbid skips it while a Job is active (it starts late once the active Job finishes, if
//      the deadline still allows), Replace deletes the active Jobs first, Allow just starts.
//      More than 100 missed start times give a TooManyMissedTimes warning and only the most
//      recent one is started. The visit is requeued for the next start time.
//
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/cronjob.h"
#include "common/api/object.h"
#include "common/util/clock.h"
#include "controllers/cronjob/schedule.h"

namespace basalt::controllers {

// What the CronJob controller needs of one Job it owns.
struct OwnedJob {
  std::string name;
  std::string uid;
  std::string phase;  // status.state.phase
  std::optional<api::Time> creation_timestamp;
  std::optional<api::Time> last_transition_time;  // status.state.lastTransitionTime

  friend bool operator==(const OwnedJob&, const OwnedJob&) = default;
};

// Completed, Failed or Terminated (Aborted can be resumed: not finished).
bool JobFinished(const std::string& phase);

struct CronEvent {
  bool warning = false;
  std::string reason;
  std::string message;

  friend bool operator==(const CronEvent&, const CronEvent&) = default;
};

struct CronPlan {
  api::CronJobStatus status;                       // after bookkeeping (and before any creation)
  std::vector<OwnedJob> delete_jobs;               // history beyond the limits, oldest first
  std::vector<api::ObjectReference> replace_jobs;  // Replace: active Jobs to delete first
  std::optional<api::Time> start;                  // create the Job of this nominal time
  std::optional<Clock::Duration> requeue_after;    // next visit (the next start time)
  std::vector<CronEvent> events;
};

// `schedule` is the parsed spec (schedule, timeZone), or its error: a CronJob that slipped
// past the webhook then gets a Warning event and no Job.
CronPlan PlanCronJob(const api::CronJob& cron_job, const std::vector<OwnedJob>& jobs,
                     const absl::StatusOr<CronSchedule>& schedule, api::Time now);

// "<cronjob>-<nominal start in minutes since the epoch>" (Volcano's name: one Job per start);
// a start that is not on a minute (`@every 15s`) is "<cronjob>-<seconds since the epoch>s".
std::string CronJobJobName(std::string_view cron_job_name, api::Time start);

// The Job of start time `start`: spec.jobTemplate's metadata (labels, annotations) and spec,
// name CronJobJobName, the CronJob's namespace, a controller ownerReference to the CronJob,
// and annotation batch.volcano.sh/cronjob-scheduled-timestamp (RFC 3339 in the zone).
api::Object BuildCronJobJob(const api::CronJob& cron_job, const CronSchedule& schedule,
                            api::Time start);

}  // namespace basalt::controllers
