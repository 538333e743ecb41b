#include "common/api/flow.h"

#include "common/api/codec.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {

std::string FlowJobName(std::string_view flow, std::string_view template_name) {
  return fmt::format("{}-{}", flow, template_name);
}

std::string TemplateString(std::string_view namespace_name, std::string_view template_name) {
  return fmt::format("{}.{}", namespace_name, template_name);
}

absl::StatusOr<JobFlow> JobFlow::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<JobFlow> JobFlow::FromObject(Object obj) {
  JobFlow jf(std::move(obj));
  BASALT_RETURN_IF_ERROR(jf.CheckKind(kJobFlowKind));
  absl::Status s = jf.Decode();
  if (!s.ok()) return Annotate(s, jf.Describe(kJobFlowKind));
  return jf;
}

absl::Status JobFlow::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  for (FieldReader& f : spec.Elements("flows")) {
    Flow flow;
    flow.name = f.String("name");
    if (f.ObjectAt("dependsOn") != nullptr) {
      FieldReader d = f.Child("dependsOn");
      FlowDependsOn dep;
      dep.targets = d.StringList("targets");
      dep.has_probe = d.ObjectAt("probe") != nullptr;
      flow.depends_on = std::move(dep);
    }
    spec_.flows.push_back(std::move(flow));
  }
  spec_.job_retain_policy = spec.String("jobRetainPolicy");
  FieldReader st = root.Child("status");
  status_.pending_jobs = st.StringList("pendingJobs");
  status_.running_jobs = st.StringList("runningJobs");
  status_.failed_jobs = st.StringList("failedJobs");
  status_.completed_jobs = st.StringList("completedJobs");
  status_.terminated_jobs = st.StringList("terminatedJobs");
  status_.unknown_jobs = st.StringList("unKnowJobs");
  for (FieldReader& j : st.Elements("jobStatusList")) {
    FlowJobStatus js;
    js.name = j.String("name");
    js.state = j.String("state");
    js.start_timestamp = j.OptTime("startTimestamp");
    js.end_timestamp = j.OptTime("endTimestamp");
    js.restart_count = j.Int32("restartCount");
    for (FieldReader& h : j.Elements("runningHistories")) {
      js.running_histories.push_back(JobRunningHistory{
          h.OptTime("startTimestamp"), h.OptTime("endTimestamp"), h.String("state")});
    }
    status_.job_status_list.push_back(std::move(js));
  }
  if (const json::Value* conds = st.ObjectAt("conditions")) {
    FieldReader cr = st.Child("conditions");
    for (const auto& m : conds->GetObject()) {
      const std::string job(json::AsView(m.name));
      if (!m.value.IsObject()) continue;
      FieldReader c = cr.Child(job);
      FlowCondition fc;
      fc.phase = c.String("phase");
      fc.create_time = c.OptTime("createTime");
      fc.running_duration = c.OptString("runningDuration");
      if (const json::Value* tsc = c.ObjectAt("taskStatusCount")) {
        for (const auto& t : tsc->GetObject()) {
          const json::Value* phases = t.value.IsObject() ? json::Find(t.value, "phase") : nullptr;
          auto& out = fc.task_status_count[std::string(json::AsView(t.name))];
          if (phases == nullptr || !phases->IsObject()) continue;
          for (const auto& p : phases->GetObject()) {
            if (p.value.IsInt()) out[std::string(json::AsView(p.name))] = p.value.GetInt();
          }
        }
      }
      status_.conditions[job] = std::move(fc);
    }
  }
  if (st.ObjectAt("state") != nullptr) status_.phase = st.Child("state").String("phase");
  return root.status();
}

namespace {

std::optional<Time> Floor(const std::optional<Time>& t) {
  if (!t) return std::nullopt;
  return FloorToSeconds(*t);
}

}  // namespace

void JobFlow::SetStatus(const JobFlowStatus& in) {
  JobFlowStatus st = in;
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"status"});
  WriteStringList(s, "pendingJobs", st.pending_jobs, a);
  WriteStringList(s, "runningJobs", st.running_jobs, a);
  WriteStringList(s, "failedJobs", st.failed_jobs, a);
  WriteStringList(s, "completedJobs", st.completed_jobs, a);
  WriteStringList(s, "terminatedJobs", st.terminated_jobs, a);
  WriteStringList(s, "unKnowJobs", st.unknown_jobs, a);
  json::Value list(rapidjson::kArrayType);
  for (FlowJobStatus& js : st.job_status_list) {
    js.start_timestamp = Floor(js.start_timestamp);
    js.end_timestamp = Floor(js.end_timestamp);
    json::Value v(rapidjson::kObjectType);
    WriteString(v, "name", js.name, a);
    WriteOptString(v, "state", js.state, a);
    WriteOptTime(v, "startTimestamp", js.start_timestamp, a);
    WriteOptTime(v, "endTimestamp", js.end_timestamp, a);
    WriteInt(v, "restartCount", js.restart_count, a);
    json::Value hist(rapidjson::kArrayType);
    for (JobRunningHistory& h : js.running_histories) {
      h.start_timestamp = Floor(h.start_timestamp);
      h.end_timestamp = Floor(h.end_timestamp);
      json::Value hv(rapidjson::kObjectType);
      WriteOptTime(hv, "startTimestamp", h.start_timestamp, a);
      WriteOptTime(hv, "endTimestamp", h.end_timestamp, a);
      WriteOptString(hv, "state", h.state, a);
      hist.PushBack(std::move(hv), a);
    }
    json::Set(v, "runningHistories", std::move(hist), a);
    list.PushBack(std::move(v), a);
  }
  json::Set(s, "jobStatusList", std::move(list), a);
  json::Value conds(rapidjson::kObjectType);
  for (auto& [job, c] : st.conditions) {
    c.create_time = Floor(c.create_time);
    json::Value v(rapidjson::kObjectType);
    WriteOptString(v, "phase", c.phase, a);
    WriteOptTime(v, "createTime", c.create_time, a);
    if (c.running_duration) WriteString(v, "runningDuration", *c.running_duration, a);
    if (!c.task_status_count.empty()) {
      json::Value tsc(rapidjson::kObjectType);
      for (const auto& [task, phases] : c.task_status_count) {
        json::Value pv(rapidjson::kObjectType);
        for (const auto& [phase, n] : phases) WriteInt(pv, phase, n, a);
        json::Value tv(rapidjson::kObjectType);
        json::Set(tv, "phase", std::move(pv), a);
        json::Set(tsc, task, std::move(tv), a);
      }
      json::Set(v, "taskStatusCount", std::move(tsc), a);
    }
    json::Set(conds, job, std::move(v), a);
  }
  json::Set(s, "conditions", std::move(conds), a);
  json::Value state(rapidjson::kObjectType);
  WriteOptString(state, "phase", st.phase, a);
  json::Set(s, "state", std::move(state), a);
  status_ = std::move(st);
}

absl::StatusOr<JobTemplate> JobTemplate::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<JobTemplate> JobTemplate::FromObject(Object obj) {
  JobTemplate jt(std::move(obj));
  BASALT_RETURN_IF_ERROR(jt.CheckKind(kJobTemplateKind));
  FieldReader root(&jt.doc(), "");
  root.ObjectAt("spec");  // type check
  jt.job_depends_on_list_ = root.Child("status").StringList("jobDependsOnList");
  if (!root.ok()) return Annotate(root.status(), jt.Describe(kJobTemplateKind));
  return jt;
}

const json::Value* JobTemplate::JobSpec() const {
  const json::Value* s = json::Find(doc(), "spec");
  return s != nullptr && s->IsObject() ? s : nullptr;
}

void JobTemplate::SetJobDependsOnList(const std::vector<std::string>& jobs) {
  json::Value& s = EnsurePath({"status"});
  WriteStringList(s, "jobDependsOnList", jobs, allocator());
  job_depends_on_list_ = jobs;
}

}  // namespace basalt::api
