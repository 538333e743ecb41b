#pragma once
// Builders for the job controller's views in tests: MakeJob("j").Task(MakeTask("w")...)...

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/util/json.h"
#include "controllers/job/job.h"

namespace basalt::controllers::testing {

class TaskBuilder {
 public:
  explicit TaskBuilder(std::string name) : tmpl_(std::make_shared<json::Document>()) {
    view_.name = std::move(name);
    tmpl_->SetObject();
  }
  TaskBuilder& Replicas(int32_t n) {
    view_.replicas = n;
    return *this;
  }
  TaskBuilder& MinAvailable(int32_t n) {
    view_.min_available = n;
    return *this;
  }
  TaskBuilder& Partitions(int32_t total, int32_t size, int32_t min = 0) {
    view_.partition_policy = PartitionPolicyView{total, size, min, std::nullopt};
    return *this;
  }
  TaskBuilder& TopologyPolicy(std::string p) {
    view_.topology_policy = std::move(p);
    return *this;
  }
  TaskBuilder& Policy(LifecyclePolicy p) {
    view_.policies.push_back(std::move(p));
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
  TaskSpecView Build() const {
    TaskSpecView v = view_;
    auto copy = std::make_shared<json::Document>();
    copy->CopyFrom(*tmpl_, copy->GetAllocator());
    v.pod_template = std::move(copy);
    return v;
  }

 private:
  json::Allocator& A() { return tmpl_->GetAllocator(); }
  json::Value& Spec() { return json::EnsureObject(*tmpl_, "spec", A()); }
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

  TaskSpecView view_;
  std::shared_ptr<json::Document> tmpl_;
  std::string last_list_ = "containers";
};

inline TaskBuilder MakeTask(std::string name) { return TaskBuilder(std::move(name)); }

class JobBuilder {
 public:
  explicit JobBuilder(std::string name) {
    view_.name = std::move(name);
    view_.namespace_name = "ns";
    view_.uid = "uid-1";
  }
  JobBuilder& Namespace(std::string ns) {
    view_.namespace_name = std::move(ns);
    return *this;
  }
  JobBuilder& Uid(std::string uid) {
    view_.uid = std::move(uid);
    return *this;
  }
  JobBuilder& Queue(std::string q) {
    view_.spec.queue = std::move(q);
    return *this;
  }
  JobBuilder& SchedulerName(std::string s) {
    view_.spec.scheduler_name = std::move(s);
    return *this;
  }
  JobBuilder& PriorityClass(std::string p) {
    view_.spec.priority_class_name = std::move(p);
    return *this;
  }
  JobBuilder& MinAvailable(int32_t n) {
    view_.spec.min_available = n;
    return *this;
  }
  JobBuilder& MaxRetry(int32_t n) {
    view_.spec.max_retry = n;
    return *this;
  }
  JobBuilder& MinSuccess(int32_t n) {
    view_.spec.min_success = n;
    return *this;
  }
  JobBuilder& Task(const TaskBuilder& t) {
    view_.spec.tasks.push_back(t.Build());
    return *this;
  }
  JobBuilder& Policy(LifecyclePolicy p) {
    view_.spec.policies.push_back(std::move(p));
    return *this;
  }
  JobBuilder& Plugin(std::string name, std::vector<std::string> args = {}) {
    view_.spec.plugins[std::move(name)] = std::move(args);
    return *this;
  }
  JobBuilder& Volume(std::string mount_path, std::string claim) {
    view_.spec.volumes.push_back({std::move(mount_path), std::move(claim)});
    return *this;
  }
  JobBuilder& Label(std::string k, std::string v) {
    view_.labels[std::move(k)] = std::move(v);
    return *this;
  }
  JobBuilder& Annotation(std::string k, std::string v) {
    view_.annotations[std::move(k)] = std::move(v);
    return *this;
  }
  JobBuilder& Version(int32_t v) {
    view_.status.version = v;
    return *this;
  }
  JobBuilder& RetryCount(int32_t n) {
    view_.status.retry_count = n;
    return *this;
  }
  JobView Build() const { return view_; }

 private:
  JobView view_;
};

inline JobBuilder MakeJob(std::string name) { return JobBuilder(std::move(name)); }

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
