#include "webhook/cronjobs/validate_cronjob.h"

#include <optional>
#include <string>

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

void NonNegative(const json::Value* spec, std::string_view key, ErrorList& errors) {
  if (spec == nullptr) return;
  const json::Value* v = json::Find(*spec, key);
  if (v == nullptr || v->IsNull()) return;
  if (!v->IsInt64() || v->GetInt64() < 0) {
    errors.Invalid(FieldPath("spec").Child(key), "must be greater than or equal to 0");
  }
}

// The Job the CronJob would create (before its name's time suffix matters), defaulted as
// the Job webhook's mutation would default it.
absl::StatusOr<json::Document> TemplateJob(const json::Value& cron_job, const json::Value& tmpl,
                                           std::string_view scheduler_name) {
  json::Document job;
  job.SetObject();
  json::Allocator& a = job.GetAllocator();
  json::Set(job, "apiVersion", json::MakeString(api::kBatchApiVersion, a), a);
  json::Set(job, "kind", json::MakeString("Job", a), a);
  json::Value meta(rapidjson::kObjectType);
  const json::Value* cj_meta = json::Find(cron_job, "metadata");
  std::string name = cj_meta != nullptr ? std::string(json::GetString(*cj_meta, "name")) : "";
  json::Set(meta, "name", json::MakeString(name + "-29000000", a), a);
  if (cj_meta != nullptr) {
    json::Set(meta, "namespace", json::MakeString(json::GetString(*cj_meta, "namespace"), a), a);
  }
  json::Set(job, "metadata", std::move(meta), a);
  if (const json::Value* spec = json::Find(tmpl, "spec")) {
    json::Set(job, "spec", json::Value(*spec, a), a);
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
  if (const json::Value* meta = json::Find(cron_job, "metadata")) {
    std::string_view name = json::GetString(*meta, "name");
    if (name.size() > kMaxCronJobNameLength) {
      errors.Invalid(FieldPath("metadata").Child("name"),
                     fmt::format("must be no more than {} characters (the Jobs are named "
                                 "<name>-<minutes>)",
                                 kMaxCronJobNameLength));
    }
  }
  const json::Value* spec = json::Find(cron_job, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    errors.Invalid(spec_path, "Required value");
    return errors;
  }
  std::optional<std::string> tz;
  bool tz_ok = true;
  if (const json::Value* z = json::Find(*spec, "timeZone"); z != nullptr && !z->IsNull()) {
    tz = z->IsString() ? std::string(json::AsView(*z)) : std::string();
    absl::StatusOr<absl::TimeZone> zone = controllers::CronSchedule::LoadZone(tz);
    if (!zone.ok()) {
      tz_ok = false;
      errors.Invalid(spec_path.Child("timeZone"),
                     fmt::format("Invalid value: \"{}\": {}", *tz, MessageOf(zone.status())));
    }
  }
  const std::string_view schedule = json::GetString(*spec, "schedule");
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
  if (const json::Value* p = json::Find(*spec, "concurrencyPolicy"); p != nullptr && !p->IsNull()) {
    std::string_view v = p->IsString() ? json::AsView(*p) : std::string_view();
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

  const json::Value* tmpl = json::Find(*spec, "jobTemplate");
  if (tmpl == nullptr || !tmpl->IsObject()) {
    errors.Invalid(spec_path.Child("jobTemplate"), "Required value");
    return errors;
  }
  absl::StatusOr<json::Document> job = TemplateJob(cron_job, *tmpl, scheduler_name);
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
