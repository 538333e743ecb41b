#pragma once
// Typed view of Volcano's batch.volcano.sh/v1alpha1 CronJob (Volcano v1.15): a schedule that
// creates batch.volcano.sh Jobs from spec.jobTemplate. As the other kinds: the raw document is
// kept whole, the structs are decoded at parse time with the CRD's defaults (concurrencyPolicy
// Allow, successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1, suspend false), and errors
// name the object and field path. Thread-compatible.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/core.h"
#include "common/api/object.h"
#include "common/api/time.h"

namespace basalt::api {

inline constexpr std::string_view kConcurrencyAllow = "Allow";
inline constexpr std::string_view kConcurrencyForbid = "Forbid";
inline constexpr std::string_view kConcurrencyReplace = "Replace";
// The annotation a Job created by a CronJob carries: its nominal start, RFC 3339 in the
// CronJob's time zone (Volcano's CronJobScheduledTimestampAnnotation).
inline constexpr std::string_view kCronJobScheduledTimestampAnnotation =
    "batch.volcano.sh/cronjob-scheduled-timestamp";

struct CronJobSpec {
  std::string schedule;
  std::optional<std::string> time_zone;
  std::string concurrency_policy = std::string(kConcurrencyAllow);
  bool suspend = false;
  std::optional<int64_t> starting_deadline_seconds;
  int32_t successful_jobs_history_limit = 3;
  int32_t failed_jobs_history_limit = 1;
  // spec.jobTemplate is read from the document (JobTemplate()): its metadata and spec are
  // copied into each Job as they are.
};

struct CronJobStatus {
  std::vector<ObjectReference> active;  // core.h's corev1.ObjectReference
  std::optional<Time> last_schedule_time;
  std::optional<Time> last_successful_time;

  friend bool operator==(const CronJobStatus&, const CronJobStatus&) = default;
};

class CronJob : public Object {
 public:
  CronJob() = default;
  static absl::StatusOr<CronJob> Parse(std::string_view json_text);
  static absl::StatusOr<CronJob> FromObject(Object obj);

  const CronJobSpec& spec() const { return spec_; }
  const CronJobStatus& status() const { return status_; }
  // spec.jobTemplate (an object), or null.
  const json::Value* JobTemplate() const;

  // Replaces status.active, lastScheduleTime and lastSuccessfulTime (other status fields kept).
  void SetStatus(const CronJobStatus& status);

 private:
  explicit CronJob(Object obj) : Object(std::move(obj)) {}
  absl::Status Decode();

  CronJobSpec spec_;
  CronJobStatus status_;
};

}  // namespace basalt::api
