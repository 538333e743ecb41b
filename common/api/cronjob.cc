#include "common/api/cronjob.h"

#include "common/api/codec.h"
#include "common/util/status.h"

namespace basalt::api {

absl::StatusOr<CronJob> CronJob::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<CronJob> CronJob::FromObject(Object obj) {
  CronJob cj(std::move(obj));
  BASALT_RETURN_IF_ERROR(cj.CheckKind("CronJob"));
  absl::Status s = cj.Decode();
  if (!s.ok()) return Annotate(s, cj.Describe("CronJob"));
  return cj;
}

absl::Status CronJob::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.schedule = spec.String("schedule");
  spec_.time_zone = spec.OptString("timeZone");
  if (std::optional<std::string> p = spec.OptString("concurrencyPolicy"); p && !p->empty()) {
    spec_.concurrency_policy = *p;
  }
  spec_.suspend = spec.Bool("suspend", false);
  spec_.starting_deadline_seconds = spec.OptInt("startingDeadlineSeconds");
  spec_.successful_jobs_history_limit = spec.Int32("successfulJobsHistoryLimit", 3);
  spec_.failed_jobs_history_limit = spec.Int32("failedJobsHistoryLimit", 1);
  spec.ObjectAt("jobTemplate");  // type check
  FieldReader status = root.Child("status");
  for (FieldReader& r : status.Elements("active")) {
    status_.active.push_back(ObjectReference{
        r.String("apiVersion"), r.String("kind"), r.String("namespace"), r.String("name"),
        r.String("uid"), r.String("resourceVersion"), r.String("fieldPath")});
  }
  status_.last_schedule_time = status.OptTime("lastScheduleTime");
  status_.last_successful_time = status.OptTime("lastSuccessfulTime");
  return root.status();
}

const json::Value* CronJob::JobTemplate() const {
  const json::Value* t = json::FindPath(doc(), {"spec", "jobTemplate"});
  return t != nullptr && t->IsObject() ? t : nullptr;
}

void CronJob::SetStatus(const CronJobStatus& st) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"status"});
  if (st.active.empty()) {
    EraseMember(s, "active");
  } else {
    json::Value arr(rapidjson::kArrayType);
    for (const ObjectReference& r : st.active) {
      json::Value v(rapidjson::kObjectType);
      WriteOptString(v, "apiVersion", r.api_version, a);
      WriteOptString(v, "kind", r.kind, a);
      WriteOptString(v, "namespace", r.namespace_name, a);
      WriteOptString(v, "name", r.name, a);
      WriteOptString(v, "uid", r.uid, a);
      WriteOptString(v, "resourceVersion", r.resource_version, a);
      WriteOptString(v, "fieldPath", r.field_path, a);
      arr.PushBack(std::move(v), a);
    }
    json::Set(s, "active", std::move(arr), a);
  }
  WriteOptTime(s, "lastScheduleTime", st.last_schedule_time, a);
  WriteOptTime(s, "lastSuccessfulTime", st.last_successful_time, a);
  status_ = st;
  auto trunc = [](std::optional<Time>& t) {
    if (t.has_value()) *t = FloorToSeconds(*t);
  };
  trunc(status_.last_schedule_time);
  trunc(status_.last_successful_time);
}

}  // namespace basalt::api
