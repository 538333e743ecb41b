#include "webhook/cronjobs/validate_cronjob.h"

#include <optional>
#include <string>

#include "common/api/codec.h"
#include "common/api/cronjob.h"
#include "common/api/vocabulary.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "controllers/cronjob/schedule.h"
#include "fmt/format.h"
#include "webhook/jobs/mutate_job.h"
#include "webhook/json_patch.h"

namespace basalt::webhook {
namespace {

// The CronJob is read through api::FieldReader; its type errors are ignored, each check below
// reports a wrong value in its own (Kubernetes') wording.
using api::FieldReader;

void NonNegative(FieldReader& spec, std::string_view key, ErrorList& errors) {
  if (!spec.Has(key)) return;  // absent or JSON null
  const std::optional<int64_t> v = spec.OptInt(key);
  if (!v || *v < 0) {
    errors.Invalid(FieldPath("spec").Child(key), "must be greater than or equal to 0");
  }
}

// The Job the CronJob would create (before its name's time suffix matters), defaulted as
// the Job webhook's mutation would default it.
absl::StatusOr<json::Document> TemplateJob(FieldReader& cron_metadata, FieldReader& tmpl,
                                           std::string_view scheduler_name) {
  json::Document job;
  job.SetObject();
  json::Allocator& a = job.GetAllocator();
  api::WriteString(job, "apiVersion", api::kBatchApiVersion, a);
  api::WriteString(job, "kind", "Job", a);
  json::Value meta(rapidjson::kObjectType);
  api::WriteString(meta, "name", fmt::format("{}-29000000", cron_metadata.View("name")), a);
  if (cron_metadata.value() != nullptr) {
    api::WriteString(meta, "namespace", cron_metadata.View("namespace"), a);
  }
  json::Set(job, "metadata", std::move(meta), a);
  if (const json::Value* spec = tmpl.Member("spec")) {
    json::Set(job, "spec", json::Value(*spec, a), a);  // a copy: MutateJob's patch edits it
  }
  JobMutation m = MutateJob(job, scheduler_name);
  if (!m.patch.empty()) {
    absl::Status s = ApplyJsonPatch(job, m.patch.ToJson());
    if (!s.ok()) return s;
  }
  return job;
}

}  // namespace

ErrorList ValidateCronJob(const json::Value& cron_job, const ClusterLister& lister,
                          std::string_view scheduler_name, const JobLimits& limits) {
  ErrorList errors;
  const FieldPath spec_path("spec");
  FieldReader reader(&cron_job, "");
  FieldReader metadata = reader.Child("metadata");
  {
    std::string_view name = metadata.View("name");
    if (name.size() > kMaxCronJobNameLength) {
      errors.Invalid(FieldPath("metadata").Child("name"),
                     fmt::format("must be no more than {} characters (the Jobs are named "
                                 "<name>-<minutes>)",
                                 kMaxCronJobNameLength));
    }
  }
  FieldReader spec = reader.Child("spec");
  if (spec.value() == nullptr) {
    errors.Invalid(spec_path, "Required value");
    return errors;
  }
  std::optional<std::string> tz;
  bool tz_ok = true;
  // A time zone that is not a string reads as "" (and is refused below).
  if (const std::optional<std::string_view> z = spec.ViewIfPresent("timeZone", "")) {
    tz = std::string(*z);
    absl::StatusOr<absl::TimeZone> zone = controllers::CronSchedule::LoadZone(tz);
    if (!zone.ok()) {
      tz_ok = false;
      errors.Invalid(spec_path.Child("timeZone"),
                     fmt::format("Invalid value: \"{}\": {}", *tz, MessageOf(zone.status())));
    }
  }
  const std::string_view schedule = spec.View("schedule");
  if (schedule.empty()) {
    errors.Invalid(spec_path.Child("schedule"), "Required value");
  } else if (tz_ok) {
    absl::StatusOr<controllers::CronSchedule> s = controllers::CronSchedule::Parse(schedule, tz);
    if (!s.ok()) {
      errors.Invalid(spec_path.Child("schedule"),
                     fmt::format("Invalid value: \"{}\": {}", schedule, MessageOf(s.status())));
    } else if (!s->Next(std::chrono::system_clock::now())) {
      errors.Invalid(
          spec_path.Child("schedule"),
          fmt::format("Invalid value: \"{}\": never fires in the next 5 years", schedule));
    }
  }
  if (const std::optional<std::string_view> p = spec.ViewIfPresent("concurrencyPolicy", "")) {
    const std::string_view v = *p;
    if (v != api::kConcurrencyAllow && v != api::kConcurrencyForbid &&
        v != api::kConcurrencyReplace) {
      errors.Invalid(spec_path.Child("concurrencyPolicy"),
                     fmt::format("Unsupported value: \"{}\": supported values: \"Allow\", "
                                 "\"Forbid\", \"Replace\"",
                                 v));
    }
  }
  NonNegative(spec, "startingDeadlineSeconds", errors);
  NonNegative(spec, "successfulJobsHistoryLimit", errors);
  NonNegative(spec, "failedJobsHistoryLimit", errors);

  FieldReader tmpl = spec.Child("jobTemplate");
  if (tmpl.value() == nullptr) {
    errors.Invalid(spec_path.Child("jobTemplate"), "Required value");
    return errors;
  }
  absl::StatusOr<json::Document> job = TemplateJob(metadata, tmpl, scheduler_name);
  if (!job.ok()) {
    errors.Internal(spec_path.Child("jobTemplate"),
                    fmt::format("defaulting the Job template: {}", MessageOf(job.status())));
    return errors;
  }
  ErrorList job_errors = ValidateJobCreate(*job, lister, limits);
  for (const FieldError& e : job_errors.errors()) {
    // The Job's "spec..." is the CronJob's "spec.jobTemplate.spec...".
    std::string path = e.path;
    if (path.rfind("spec", 0) == 0) path = "spec.jobTemplate." + path;
    switch (e.kind) {
      case ErrorKind::kInvalid:
        errors.Invalid(FieldPath(path), e.message);
        break;
      case ErrorKind::kForbidden:
        errors.Forbidden(FieldPath(path), e.message);
        break;
      default:
        errors.Internal(FieldPath(path), e.message);
        break;
    }
  }
  return errors;
}

AdmissionResponse CronJobValidator::Handle(const AdmissionRequest& request) const {
  if ((request.operation == Operation::kCreate || request.operation == Operation::kUpdate) &&
      request.object != nullptr) {
    return ValidateCronJob(*request.object, lister_, scheduler_name_, limits_).ToResponse();
  }
  return AdmissionResponse::Allow();
}

}  // namespace basalt::webhook
