#include "common/api/batch.h"

#include <algorithm>
#include <cctype>

#include "common/api/codec.h"
#include "common/util/duration.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {
namespace {

std::vector<LifecyclePolicy> DecodePolicies(FieldReader& r) {
  std::vector<LifecyclePolicy> out;
  for (FieldReader& p : r.Elements("policies")) {
    LifecyclePolicy policy;
    policy.action = p.String("action");
    auto add_event = [&](std::string_view name) {
      if (std::optional<JobEvent> e = ParseEvent(name); e && *e != JobEvent::kNone) {
        policy.events.push_back(*e);
      }
    };
    add_event(p.String("event"));
    for (const std::string& e : p.StringList("events")) add_event(e);
    policy.exit_code = p.OptInt32("exitCode");
    if (std::optional<std::string> t = p.OptString("timeout")) {
      absl::StatusOr<std::chrono::nanoseconds> d = ParseGoDuration(*t);
      if (d.ok()) {
        policy.timeout = std::chrono::round<std::chrono::milliseconds>(*d);
      } else {
        p.Fail("timeout", MessageOf(d.status()));
      }
    }
    out.push_back(std::move(policy));
  }
  return out;
}

// A deep copy of `v` as a document of its own (an empty object for null).
std::shared_ptr<const json::Document> CopyDocument(const json::Value* v) {
  auto doc = std::make_shared<json::Document>();
  if (v != nullptr) {
    doc->CopyFrom(*v, doc->GetAllocator());
  } else {
    doc->SetObject();
  }
  return doc;
}

int32_t Saturate(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
}

void WriteOptCounter(json::Value& obj, std::string_view key, int32_t v, json::Allocator& a) {
  if (v != 0) {
    WriteInt(obj, key, v, a);
  } else {
    EraseMember(obj, key);
  }
}

}  // namespace

absl::StatusOr<Job> Job::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Job> Job::FromObject(Object obj) {
  Job job(std::move(obj));
  BASALT_RETURN_IF_ERROR(job.CheckKind("Job"));
  absl::Status s = job.Decode();
  if (!s.ok()) return Annotate(s, job.Describe("Job"));
  return job;
}

absl::Status Job::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.scheduler_name = spec.String("schedulerName");
  spec_.min_available = spec.Int32("minAvailable");
  spec_.queue = spec.String("queue");
  if (spec_.queue.empty()) spec_.queue = std::string(kDefaultQueue);
  spec_.max_retry = spec.Int32("maxRetry", 3);
  spec_.ttl_seconds_after_finished = spec.OptInt32("ttlSecondsAfterFinished");
  spec_.priority_class_name = spec.String("priorityClassName");
  spec_.min_success = spec.OptInt32("minSuccess");
  if (const json::Value* plugins = spec.ObjectAt("plugins")) {
    FieldReader pr(plugins, "spec.plugins");
    for (auto it = plugins->MemberBegin(); it != plugins->MemberEnd(); ++it) {
      std::string_view name = json::AsView(it->name);
      spec_.plugins[std::string(name)] = pr.StringList(name);  // null reads as no arguments
    }
    if (!pr.ok()) return pr.status();
  }
  spec_.policies = DecodePolicies(spec);
  for (FieldReader& t : spec.Elements("tasks")) {
    TaskSpec task;
    task.name = t.String("name");
    task.replicas = t.Int32("replicas");
    task.min_available = t.OptInt32("minAvailable");
    task.pod_template = CopyDocument(t.ObjectAt("template"));
    task.policies = DecodePolicies(t);
    if (t.ObjectAt("dependsOn") != nullptr) {
      FieldReader d = t.Child("dependsOn");
      task.depends_on = DependsOn{d.StringList("name"), d.String("iteration")};
    }
    if (t.ObjectAt("partitionPolicy") != nullptr) {
      FieldReader pp = t.Child("partitionPolicy");
      task.partition_policy =
          PartitionPolicy{pp.Int32("totalPartitions"), pp.Int32("partitionSize"),
                          pp.Int32("minPartitions"), DecodeNetworkTopology(pp)};
    }
    task.max_retry = t.Int32("maxRetry");
    task.topology_policy = t.String("topologyPolicy");
    spec_.tasks.push_back(std::move(task));
  }
  for (FieldReader& v : spec.Elements("volumes")) {
    JobVolume vol;
    vol.mount_path = v.String("mountPath");
    vol.volume_claim_name = v.String("volumeClaimName");
    if (const json::Value* claim = v.ObjectAt("volumeClaim"))
      vol.volume_claim = CopyDocument(claim);
    spec_.volumes.push_back(std::move(vol));
  }
  spec_.network_topology = DecodeNetworkTopology(spec);
  spec_.running_estimate = spec.String("runningEstimate");

  FieldReader status = root.Child("status");
  FieldReader state = status.Child("state");
  status_.state.phase = state.String("phase");
  status_.state.reason = state.String("reason");
  status_.state.message = state.String("message");
  status_.state.last_transition_time = state.OptTime("lastTransitionTime");
  status_.min_available = status.Int32("minAvailable");
  if (const json::Value* tsc = status.ObjectAt("taskStatusCount")) {
    for (auto it = tsc->MemberBegin(); it != tsc->MemberEnd(); ++it) {
      std::string task(json::AsView(it->name));
      FieldReader counts(&it->value, fmt::format("status.taskStatusCount.{}", task));
      FieldReader phase = counts.Child("phase");
      auto& out = status_.task_status_count[task];
      if (const json::Value* p = phase.value()) {
        for (auto pit = p->MemberBegin(); pit != p->MemberEnd(); ++pit) {
          std::string_view ph = json::AsView(pit->name);
          out[std::string(ph)] = phase.Int32(ph);
        }
      }
      if (!counts.ok()) return counts.status();
    }
  }
  status_.pending = status.Int32("pending");
  status_.running = status.Int32("running");
  status_.succeeded = status.Int32("succeeded");
  status_.failed = status.Int32("failed");
  status_.terminating = status.Int32("terminating");
  status_.unknown = status.Int32("unknown");
  status_.version = status.Int32("version");
  status_.retry_count = status.Int32("retryCount");
  status_.running_duration = status.String("runningDuration");
  for (const auto& [k, v] : status.StringMapAt("controlledResources")) {
    status_.controlled_resources.emplace(k, v);
  }
  for (FieldReader& c : status.Elements("conditions")) {
    std::string type = c.String("type");
    if (type.empty()) {
      status_.conditions.push_back(
          JobCondition{c.String("status"), c.OptTime("lastTransitionTime")});
      continue;
    }
    Condition tc;
    tc.type = std::move(type);
    tc.status = c.String("status");
    tc.reason = c.String("reason");
    tc.message = c.String("message");
    tc.last_transition_time = c.OptTime("lastTransitionTime");
    status_.typed_conditions.push_back(std::move(tc));
  }
  return root.status();
}

const json::Value* Job::TaskTemplate(size_t index) const {
  const json::Value* tasks = json::FindPath(doc(), {"spec", "tasks"});
  if (tasks == nullptr || !tasks->IsArray() || index >= tasks->Size()) return nullptr;
  return json::Find((*tasks)[static_cast<rapidjson::SizeType>(index)], "template");
}

const TaskSpec* Job::FindTask(std::string_view name) const { return spec_.FindTask(name); }

std::string_view TaskSpec::TemplateSpecString(std::string_view key) const {
  if (pod_template == nullptr) return {};
  const json::Value* spec = json::Find(*pod_template, "spec");
  return spec == nullptr ? std::string_view() : json::GetString(*spec, key);
}

int32_t JobSpec::TotalReplicas() const {
  int64_t total = 0;
  for (const TaskSpec& t : tasks) total += t.replicas;
  return Saturate(total);
}

int32_t JobSpec::TotalTaskMinAvailable() const {
  int64_t total = 0;
  for (const TaskSpec& t : tasks) total += t.min_available.value_or(t.replicas);
  return Saturate(total);
}

const TaskSpec* JobSpec::FindTask(std::string_view name) const {
  for (const TaskSpec& t : tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void Job::SetStatus(const JobStatus& st) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"status"});
  json::Value& state = json::EnsureObject(s, "state", a);
  WriteOptString(state, "phase", st.state.phase, a);
  WriteOptString(state, "reason", st.state.reason, a);
  WriteOptString(state, "message", st.state.message, a);
  WriteOptTime(state, "lastTransitionTime", st.state.last_transition_time, a);
  WriteOptCounter(s, "minAvailable", st.min_available, a);
  if (st.task_status_count.empty()) {
    EraseMember(s, "taskStatusCount");
  } else {
    json::Value tsc(rapidjson::kObjectType);
    for (const auto& [task, phases] : st.task_status_count) {
      json::Value phase(rapidjson::kObjectType);
      for (const auto& [p, n] : phases) phase.AddMember(json::MakeString(p, a), json::Value(n), a);
      json::Value entry(rapidjson::kObjectType);
      entry.AddMember("phase", std::move(phase), a);
      tsc.AddMember(json::MakeString(task, a), std::move(entry), a);
    }
    json::Set(s, "taskStatusCount", std::move(tsc), a);
  }
  WriteOptCounter(s, "pending", st.pending, a);
  WriteOptCounter(s, "running", st.running, a);
  WriteOptCounter(s, "succeeded", st.succeeded, a);
  WriteOptCounter(s, "failed", st.failed, a);
  WriteOptCounter(s, "terminating", st.terminating, a);
  WriteOptCounter(s, "unknown", st.unknown, a);
  WriteOptCounter(s, "version", st.version, a);
  WriteOptCounter(s, "retryCount", st.retry_count, a);
  WriteOptString(s, "runningDuration", st.running_duration, a);
  if (st.controlled_resources.empty()) {
    EraseMember(s, "controlledResources");
  } else {
    WriteStringMap(s, "controlledResources",
                   StringMap(st.controlled_resources.begin(), st.controlled_resources.end()), a);
  }
  if (st.conditions.empty() && st.typed_conditions.empty()) {
    EraseMember(s, "conditions");
  } else {
    json::Value arr(rapidjson::kArrayType);
    for (const JobCondition& c : st.conditions) {
      json::Value v(rapidjson::kObjectType);
      WriteString(v, "status", c.status, a);
      WriteOptTime(v, "lastTransitionTime", c.last_transition_time, a);
      arr.PushBack(std::move(v), a);
    }
    for (const Condition& c : st.typed_conditions) {
      json::Value v(rapidjson::kObjectType);
      WriteString(v, "type", c.type, a);
      WriteString(v, "status", c.status, a);
      WriteOptString(v, "reason", c.reason, a);
      WriteOptString(v, "message", c.message, a);
      WriteOptTime(v, "lastTransitionTime", c.last_transition_time, a);
      arr.PushBack(std::move(v), a);
    }
    json::Set(s, "conditions", std::move(arr), a);
  }
  status_ = st;
  // Keep the struct equal to what a re-parse would give (times have seconds precision).
  auto trunc = [](std::optional<Time>& t) {
    if (t.has_value()) *t = FloorToSeconds(*t);
  };
  trunc(status_.state.last_transition_time);
  for (JobCondition& c : status_.conditions) trunc(c.last_transition_time);
  for (Condition& c : status_.typed_conditions) {
    trunc(c.last_transition_time);
    trunc(c.last_probe_time);
  }
}

std::optional<int32_t> JobStatusCounts::TaskSucceeded(std::string_view task) const {
  auto it = task_status_count.find(std::string(task));
  if (it == task_status_count.end()) return std::nullopt;
  auto p = it->second.find("Succeeded");
  return p == it->second.end() ? 0 : p->second;
}

const Condition* JobStatus::FindTypedCondition(std::string_view type) const {
  for (const Condition& c : typed_conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::optional<TaskReplicaCounts> FindTaskReplicaCounts(const json::Value& job,
                                                       std::string_view task) {
  const json::Value* tasks = json::FindPath(job, {"spec", "tasks"});
  if (tasks == nullptr || !tasks->IsArray()) return std::nullopt;
  for (const json::Value& t : tasks->GetArray()) {
    if (!t.IsObject() || json::GetString(t, "name") != task) continue;
    return TaskReplicaCounts{Saturate(json::GetInt(t, "replicas", 0)),
                             Saturate(json::GetInt(t, "maxRetry", 0))};
  }
  return std::nullopt;
}

OwnerReference JobControllerRef(const Job& job) {
  return ControllerRef(kBatchApiVersion, kJobKind, job.name(), job.uid());
}

void StripUpdatableJobSpecFields(json::Value& old_spec, json::Value& new_spec) {
  for (json::Value* spec : {&old_spec, &new_spec}) {
    EraseMember(*spec, "minAvailable");
    EraseMember(*spec, "priorityClassName");
  }
  json::Value* old_tasks = json::FindMutable(old_spec, "tasks");
  json::Value* new_tasks = json::FindMutable(new_spec, "tasks");
  if (old_tasks && new_tasks && old_tasks->IsArray() && new_tasks->IsArray()) {
    if (old_tasks->Size() != new_tasks->Size()) {
      // Reported on its own ("may not add or remove tasks").
      EraseMember(old_spec, "tasks");
      EraseMember(new_spec, "tasks");
    } else {
      for (rapidjson::SizeType i = 0; i < old_tasks->Size(); ++i) {
        for (json::Value* task : {&(*old_tasks)[i], &(*new_tasks)[i]}) {
          EraseMember(*task, "replicas");
          EraseMember(*task, "minAvailable");
        }
      }
    }
  }
  json::Value* old_volumes = json::FindMutable(old_spec, "volumes");
  json::Value* new_volumes = json::FindMutable(new_spec, "volumes");
  if (old_volumes && new_volumes && old_volumes->IsArray() && new_volumes->IsArray()) {
    rapidjson::SizeType n = std::min(old_volumes->Size(), new_volumes->Size());
    for (rapidjson::SizeType i = 0; i < n; ++i) {
      json::Value& old_volume = (*old_volumes)[i];
      const json::Value* claim = json::Find(old_volume, "volumeClaim");
      // The job controller writes the generated PVC name back into the spec.
      if (claim != nullptr && !claim->IsNull() &&
          json::GetString(old_volume, "volumeClaimName").empty()) {
        EraseMember(old_volume, "volumeClaimName");
        EraseMember((*new_volumes)[i], "volumeClaimName");
      }
    }
  }
}

// --- Command ---------------------------------------------------------------------------

Command Command::Make(std::string_view ns, std::string_view action, const OwnerReference& target,
                      std::string_view reason, std::string_view message) {
  Command cmd{Object()};
  cmd.SetApiVersionKind(kBusApiVersion, "Command");
  std::string lowered(action);
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  cmd.SetGenerateName(fmt::format("{}-{}-", target.name, lowered));
  cmd.SetNamespace(ns);
  cmd.SetOwnerReferences({target});
  json::Allocator& a = cmd.allocator();
  WriteString(cmd.mutable_doc(), "action", action, a);
  json::Set(cmd.mutable_doc(), "target", EncodeOwnerReference(target, a), a);
  WriteOptString(cmd.mutable_doc(), "reason", reason, a);
  WriteOptString(cmd.mutable_doc(), "message", message, a);
  cmd.action_ = std::string(action);
  cmd.target_ = target;
  cmd.reason_ = std::string(reason);
  cmd.message_ = std::string(message);
  return cmd;
}

absl::StatusOr<Command> Command::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<Command> Command::FromObject(Object obj) {
  Command cmd(std::move(obj));
  BASALT_RETURN_IF_ERROR(cmd.CheckKind("Command"));
  absl::Status s = cmd.Decode();
  if (!s.ok()) return Annotate(s, cmd.Describe("Command"));
  return cmd;
}

absl::Status Command::Decode() {
  FieldReader root(&doc(), "");
  action_ = root.String("action");
  reason_ = root.String("reason");
  message_ = root.String("message");
  if (const json::Value* t = root.ObjectAt("target")) {
    auto ref = DecodeOwnerReference(*t);
    if (!ref.ok()) return Annotate(ref.status(), "target");
    target_ = *std::move(ref);
  }
  return root.status();
}

}  // namespace basalt::api
