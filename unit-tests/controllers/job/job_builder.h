#pragma once
// Builders of api::Job for the job controller's tests: MakeJob("j").Task(MakeTask("w")...)...
// They write the Job's JSON and decode it as the reconciler does.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/api/batch.h"
#include "common/util/duration.h"
#include "common/util/json.h"
#include "controllers/job/model.h"

namespace basalt::controllers::testing {

class TaskBuilder {
 public:
  explicit TaskBuilder(std::string name) : tmpl_(std::make_shared<json::Document>()) {
    task_.SetObject();
    json::Set(task_, "name", json::MakeString(name, task_.GetAllocator()), task_.GetAllocator());
    tmpl_->SetObject();
  }
  // Copies are deep: a copy edited afterwards leaves the original alone.
  TaskBuilder(const TaskBuilder& other)
      : tmpl_(std::make_shared<json::Document>()), last_list_(other.last_list_) {
    task_.CopyFrom(other.task_, task_.GetAllocator());
    tmpl_->CopyFrom(*other.tmpl_, tmpl_->GetAllocator());
  }
  TaskBuilder& operator=(const TaskBuilder& other) {
    if (this != &other) {
      task_.CopyFrom(other.task_, task_.GetAllocator());
      tmpl_ = std::make_shared<json::Document>();
      tmpl_->CopyFrom(*other.tmpl_, tmpl_->GetAllocator());
      last_list_ = other.last_list_;
    }
    return *this;
  }
  TaskBuilder& Replicas(int32_t n) { return Field("replicas", json::Value(n)); }
  TaskBuilder& MinAvailable(int32_t n) { return Field("minAvailable", json::Value(n)); }
  TaskBuilder& MaxRetry(int32_t n) { return Field("maxRetry", json::Value(n)); }
  TaskBuilder& Partitions(int32_t total, int32_t size, int32_t min = 0) {
    json::Allocator& a = task_.GetAllocator();
    json::Value& pp = json::EnsureObject(task_, "partitionPolicy", a);
    json::Set(pp, "totalPartitions", json::Value(total), a);
    json::Set(pp, "partitionSize", json::Value(size), a);
    json::Set(pp, "minPartitions", json::Value(min), a);
    return *this;
  }
  // partitionPolicy.networkTopology (after Partitions).
  TaskBuilder& PartitionNetworkTopology(std::string_view mode, int32_t highest_tier_allowed) {
    json::Allocator& a = task_.GetAllocator();
    json::Value& pp = json::EnsureObject(task_, "partitionPolicy", a);
    json::Value& nt = json::EnsureObject(pp, "networkTopology", a);
    json::Set(nt, "mode", json::MakeString(mode, a), a);
    json::Set(nt, "highestTierAllowed", json::Value(highest_tier_allowed), a);
    return *this;
  }
  TaskBuilder& TopologyPolicy(std::string_view p) {
    return Field("topologyPolicy", json::MakeString(p, task_.GetAllocator()));
  }
  TaskBuilder& DependsOn(std::vector<std::string> names, std::string_view iteration = "") {
    json::Allocator& a = task_.GetAllocator();
    json::Value d(rapidjson::kObjectType);
    json::Value list(rapidjson::kArrayType);
    for (const std::string& n : names) list.PushBack(json::MakeString(n, a), a);
    json::Set(d, "name", std::move(list), a);
    if (!iteration.empty()) json::Set(d, "iteration", json::MakeString(iteration, a), a);
    return Field("dependsOn", std::move(d));
  }
  TaskBuilder& Policy(const LifecyclePolicy& p) {
    json::Allocator& a = task_.GetAllocator();
    if (json::Find(task_, "policies") == nullptr) {
      json::Set(task_, "policies", json::Value(rapidjson::kArrayType), a);
    }
    json::FindMutable(task_, "policies")->PushBack(EncodePolicy(p, a), a);
    return *this;
  }
  // Adds a container; Request/Limit apply to the last one added.
  TaskBuilder& Container(std::string_view name, std::string_view image = "busybox") {
    return AddContainer("containers", name, image);
  }
  TaskBuilder& InitContainer(std::string_view name, std::string_view image = "busybox") {
    return AddContainer("initContainers", name, image);
  }
  TaskBuilder& Request(std::string_view resource, std::string_view qty) {
    return Resource("requests", resource, qty);
  }
  TaskBuilder& Limit(std::string_view resource, std::string_view qty) {
    return Resource("limits", resource, qty);
  }
  TaskBuilder& SpecField(std::string_view key, std::string_view value) {
    json::Set(Spec(), key, json::MakeString(value, A()), A());
    return *this;
  }
  TaskBuilder& Hostname(std::string_view h) { return SpecField("hostname", h); }
  TaskBuilder& Subdomain(std::string_view s) { return SpecField("subdomain", s); }
  TaskBuilder& PriorityClass(std::string_view p) { return SpecField("priorityClassName", p); }
  TaskBuilder& TemplateLabel(std::string_view k, std::string_view v) {
    json::Value& meta = json::EnsureObject(*tmpl_, "metadata", A());
    json::Set(json::EnsureObject(meta, "labels", A()), k, json::MakeString(v, A()), A());
    return *this;
  }
  TaskBuilder& TemplateAnnotation(std::string_view k, std::string_view v) {
    json::Value& meta = json::EnsureObject(*tmpl_, "metadata", A());
    json::Set(json::EnsureObject(meta, "annotations", A()), k, json::MakeString(v, A()), A());
    return *this;
  }
  // Sets template.spec.<key> to a raw JSON value (for fields Basalt does not know).
  TaskBuilder& SpecJson(std::string_view key, std::string_view json_text) {
    auto doc = json::Parse(json_text);
    json::Value v;
    v.CopyFrom(*doc, A());
    json::Set(Spec(), key, std::move(v), A());
    return *this;
  }
  // The spec.tasks[] entry as JSON.
  json::Value ToJson(json::Allocator& a) const {
    json::Value t(task_, a);
    json::Set(t, "template", json::Value(*tmpl_, a), a);
    return t;
  }
  // The task as a Job with only this task decodes it.
  api::TaskSpec Build() const;

  // spec.policies[] / spec.tasks[].policies[] for `p`.
  static json::Value EncodePolicy(const LifecyclePolicy& p, json::Allocator& a) {
    json::Value v(rapidjson::kObjectType);
    json::Set(v, "action", json::MakeString(p.action, a), a);
    if (!p.events.empty()) {
      json::Value events(rapidjson::kArrayType);
      for (Event e : p.events) events.PushBack(json::MakeString(EventName(e), a), a);
      json::Set(v, "events", std::move(events), a);
    }
    if (p.exit_code) json::Set(v, "exitCode", json::Value(*p.exit_code), a);
    if (p.timeout) {
      json::Set(v, "timeout",
                json::MakeString(FormatGoDuration(std::chrono::nanoseconds(*p.timeout)), a), a);
    }
    return v;
  }

 private:
  json::Allocator& A() { return tmpl_->GetAllocator(); }
  json::Value& Spec() { return json::EnsureObject(*tmpl_, "spec", A()); }
  TaskBuilder& Field(std::string_view key, json::Value v) {
    json::Set(task_, key, std::move(v), task_.GetAllocator());
    return *this;
  }
  TaskBuilder& AddContainer(std::string_view list, std::string_view name, std::string_view image) {
    json::Value& spec = Spec();
    if (json::Find(spec, list) == nullptr) {
      json::Set(spec, list, json::Value(rapidjson::kArrayType), A());
    }
    json::Value c(rapidjson::kObjectType);
    json::Set(c, "name", json::MakeString(name, A()), A());
    json::Set(c, "image", json::MakeString(image, A()), A());
    json::FindMutable(spec, list)->PushBack(std::move(c), A());
    last_list_ = std::string(list);
    return *this;
  }
  TaskBuilder& Resource(std::string_view kind, std::string_view resource, std::string_view qty) {
    json::Value* list = json::FindMutable(Spec(), last_list_);
    json::Value& c = (*list)[list->Size() - 1];
    json::Value& res = json::EnsureObject(c, "resources", A());
    json::Set(json::EnsureObject(res, kind, A()), resource, json::MakeString(qty, A()), A());
    return *this;
  }

  json::Document task_;
  std::shared_ptr<json::Document> tmpl_;
  std::string last_list_ = "containers";
};

inline TaskBuilder MakeTask(std::string name) { return TaskBuilder(std::move(name)); }

// Builds the Job's JSON document, which Build() decodes with api::Job::FromObject, so tests
// see what the controller sees.
class JobBuilder {
 public:
  explicit JobBuilder(std::string name) {
    doc_.SetObject();
    Set({"apiVersion"}, Str(api::kBatchApiVersion));
    Set({"kind"}, Str("Job"));
    Set({"metadata", "name"}, Str(name));
    Set({"metadata", "namespace"}, Str("ns"));
    Set({"metadata", "uid"}, Str("uid-1"));
    json::EnsureObject(doc_, "spec", A());
  }
  // Copies are deep.
  JobBuilder(const JobBuilder& other) { doc_.CopyFrom(other.doc_, doc_.GetAllocator()); }
  JobBuilder& operator=(const JobBuilder& other) {
    if (this != &other) doc_.CopyFrom(other.doc_, doc_.GetAllocator());
    return *this;
  }
  JobBuilder& Namespace(std::string_view ns) { return Set({"metadata", "namespace"}, Str(ns)); }
  JobBuilder& Uid(std::string_view uid) { return Set({"metadata", "uid"}, Str(uid)); }
  JobBuilder& Queue(std::string_view q) { return Set({"spec", "queue"}, Str(q)); }
  JobBuilder& SchedulerName(std::string_view s) { return Set({"spec", "schedulerName"}, Str(s)); }
  JobBuilder& PriorityClass(std::string_view p) {
    return Set({"spec", "priorityClassName"}, Str(p));
  }
  JobBuilder& MinAvailable(int32_t n) { return Set({"spec", "minAvailable"}, json::Value(n)); }
  JobBuilder& MaxRetry(int32_t n) { return Set({"spec", "maxRetry"}, json::Value(n)); }
  JobBuilder& MinSuccess(int32_t n) { return Set({"spec", "minSuccess"}, json::Value(n)); }
  JobBuilder& NetworkTopology(std::string_view mode, int32_t highest_tier_allowed) {
    Set({"spec", "networkTopology", "mode"}, Str(mode));
    return Set({"spec", "networkTopology", "highestTierAllowed"},
               json::Value(highest_tier_allowed));
  }
  JobBuilder& Task(const TaskBuilder& t) { return Append("tasks", t.ToJson(A())); }
  JobBuilder& Policy(const LifecyclePolicy& p) {
    return Append("policies", TaskBuilder::EncodePolicy(p, A()));
  }
  JobBuilder& Plugin(std::string_view name, const std::vector<std::string>& args = {}) {
    json::Value list(rapidjson::kArrayType);
    for (const std::string& arg : args) list.PushBack(Str(arg), A());
    return Set({"spec", "plugins", name}, std::move(list));
  }
  JobBuilder& Volume(std::string_view mount_path, std::string_view claim) {
    json::Value v(rapidjson::kObjectType);
    json::Set(v, "mountPath", Str(mount_path), A());
    json::Set(v, "volumeClaimName", Str(claim), A());
    return Append("volumes", std::move(v));
  }
  JobBuilder& Label(std::string_view k, std::string_view v) {
    return Set({"metadata", "labels", k}, Str(v));
  }
  JobBuilder& Annotation(std::string_view k, std::string_view v) {
    return Set({"metadata", "annotations", k}, Str(v));
  }
  JobBuilder& Phase(std::string_view phase) {
    return Set({"status", "state", "phase"}, Str(phase));
  }
  JobBuilder& Version(int32_t v) { return Set({"status", "version"}, json::Value(v)); }
  JobBuilder& RetryCount(int32_t n) { return Set({"status", "retryCount"}, json::Value(n)); }
  JobBuilder& ControlledResource(std::string_view key, std::string_view value) {
    return Set({"status", "controlledResources", key}, Str(value));
  }
  api::Job Build() const {
    absl::StatusOr<api::Object> obj = api::Object::CopyOf(doc_);
    if (!obj.ok()) throw std::runtime_error(obj.status().ToString());
    absl::StatusOr<api::Job> job = api::Job::FromObject(*std::move(obj));
    if (!job.ok()) throw std::runtime_error(job.status().ToString());
    return *std::move(job);
  }

 private:
  json::Allocator& A() { return doc_.GetAllocator(); }
  json::Value Str(std::string_view s) { return json::MakeString(s, A()); }
  JobBuilder& Set(std::initializer_list<std::string_view> path, json::Value v) {
    json::Value* at = &doc_;
    const std::string_view* last = path.end() - 1;
    for (const std::string_view* k = path.begin(); k != last; ++k) {
      at = &json::EnsureObject(*at, *k, A());
    }
    json::Set(*at, *last, std::move(v), A());
    return *this;
  }
  JobBuilder& Append(std::string_view list, json::Value v) {
    json::Value& spec = json::EnsureObject(doc_, "spec", A());
    if (json::Find(spec, list) == nullptr) {
      json::Set(spec, list, json::Value(rapidjson::kArrayType), A());
    }
    json::FindMutable(spec, list)->PushBack(std::move(v), A());
    return *this;
  }

  json::Document doc_;
};

inline JobBuilder MakeJob(std::string name) { return JobBuilder(std::move(name)); }

inline api::TaskSpec TaskBuilder::Build() const {
  return MakeJob("j").Task(*this).Build().spec().tasks[0];
}

// A LifecyclePolicy: OnEvents({Event::kPodFailed}, "RestartJob").
inline LifecyclePolicy OnEvents(std::vector<Event> events, std::string action,
                                std::optional<std::chrono::milliseconds> timeout = {}) {
  LifecyclePolicy p;
  p.events = std::move(events);
  p.action = std::move(action);
  p.timeout = timeout;
  return p;
}
inline LifecyclePolicy OnExitCode(int32_t code, std::string action) {
  LifecyclePolicy p;
  p.exit_code = code;
  p.action = std::move(action);
  return p;
}

// A JSON string value at `path` of `v`, "" when absent.
inline std::string StringAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* x = json::FindPath(v, path);
  return x != nullptr && x->IsString() ? std::string(json::AsView(*x)) : std::string();
}

}  // namespace basalt::controllers::testing
