#pragma once
// Builders of the objects vcctl reads (Job, Queue, PodGroup, Pod, Event) for the cli tests:
// each sets only what a test names and renders the API server's JSON.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/api/batch.h"
#include "common/api/core.h"
#include "common/api/object.h"
#include "common/api/scheduling.h"
#include "common/api/time.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::cli::testing {

inline api::Time At(std::string_view rfc3339) { return *api::ParseRfc3339(rfc3339); }

class ObjectBuilder {
 public:
  ObjectBuilder(std::string_view api_version, std::string_view kind, std::string_view name) {
    obj_.SetApiVersionKind(api_version, kind);
    obj_.SetName(name);
  }
  std::string Json() const { return obj_.ToJson(); }

 protected:
  void Set(std::initializer_list<std::string_view> path, std::string_view v) {
    obj_.SetPath(path, json::MakeString(v, obj_.allocator()));
  }
  void Set(std::initializer_list<std::string_view> path, int64_t v) {
    obj_.SetPath(path, json::Value(v));
  }
  void SetRaw(std::initializer_list<std::string_view> path, std::string_view json_text) {
    json::Document d = *json::Parse(json_text);
    obj_.SetPath(path, d);
  }
  api::Object obj_;
};

class JobBuilder : public ObjectBuilder {
 public:
  explicit JobBuilder(std::string_view name, std::string_view ns = "default")
      : ObjectBuilder("batch.volcano.sh/v1alpha1", "Job", name) {
    obj_.SetNamespace(ns);
    obj_.SetUid(std::string(name) + "-uid");
    obj_.SetResourceVersion("1");
    obj_.SetCreationTimestamp(At("2026-05-01T10:00:00Z"));
  }
  JobBuilder& Uid(std::string_view uid) { return obj_.SetUid(uid), *this; }
  JobBuilder& Rv(std::string_view rv) { return obj_.SetResourceVersion(rv), *this; }
  JobBuilder& Label(std::string_view k, std::string_view v) { return obj_.SetLabel(k, v), *this; }
  JobBuilder& Scheduler(std::string_view s) { return Set({"spec", "schedulerName"}, s), *this; }
  JobBuilder& MaxRetry(int v) { return Set({"spec", "maxRetry"}, v), *this; }
  // Appends a task with one busybox container.
  JobBuilder& Task(std::string_view name, int replicas) {
    tasks_.push_back(fmt::format(
        R"({{"name":"{}","replicas":{},"template":{{"spec":{{"containers":[{{"name":"main","image":"busybox"}}]}}}}}})",
        name, replicas));
    SetRaw({"spec", "tasks"}, fmt::format("[{}]", fmt::join(tasks_, ",")));
    return *this;
  }
  JobBuilder& Phase(std::string_view p) { return Set({"status", "state", "phase"}, p), *this; }
  JobBuilder& Reason(std::string_view r) { return Set({"status", "state", "reason"}, r), *this; }
  JobBuilder& Message(std::string_view m) { return Set({"status", "state", "message"}, m), *this; }
  JobBuilder& RetryCount(int v) { return Set({"status", "retryCount"}, v), *this; }
  JobBuilder& MinAvailable(int v) { return Set({"status", "minAvailable"}, v), *this; }
  JobBuilder& Running(int v) { return Set({"status", "running"}, v), *this; }
  JobBuilder& Succeeded(int v) { return Set({"status", "succeeded"}, v), *this; }
  JobBuilder& Failed(int v) { return Set({"status", "failed"}, v), *this; }
  api::Job Build() const { return *api::Job::Parse(Json()); }

 private:
  std::vector<std::string> tasks_;
};

class QueueBuilder : public ObjectBuilder {
 public:
  explicit QueueBuilder(std::string_view name)
      : ObjectBuilder("scheduling.volcano.sh/v1beta1", "Queue", name) {
    obj_.SetUid(std::string(name) + "-uid");
  }
  QueueBuilder& Weight(int w) { return Set({"spec", "weight"}, w), *this; }
  QueueBuilder& State(std::string_view s) { return Set({"status", "state"}, s), *this; }
  QueueBuilder& Pending(int v) { return Set({"status", "pending"}, v), *this; }
  QueueBuilder& Running(int v) { return Set({"status", "running"}, v), *this; }
  QueueBuilder& Inqueue(int v) { return Set({"status", "inqueue"}, v), *this; }
  api::Queue Build() const { return *api::Queue::Parse(Json()); }
};

class PodGroupBuilder : public ObjectBuilder {
 public:
  explicit PodGroupBuilder(std::string_view name, std::string_view ns = "default")
      : ObjectBuilder("scheduling.volcano.sh/v1beta1", "PodGroup", name) {
    obj_.SetNamespace(ns);
    obj_.SetCreationTimestamp(At("2026-05-01T10:00:00Z"));
  }
  PodGroupBuilder& Queue(std::string_view q) { return Set({"spec", "queue"}, q), *this; }
  PodGroupBuilder& MinMember(int v) { return Set({"spec", "minMember"}, v), *this; }
  PodGroupBuilder& Phase(std::string_view p) { return Set({"status", "phase"}, p), *this; }
  PodGroupBuilder& Running(int v) { return Set({"status", "running"}, v), *this; }
  api::PodGroup Build() const { return *api::PodGroup::Parse(Json()); }
};

class PodBuilder : public ObjectBuilder {
 public:
  explicit PodBuilder(std::string_view name, std::string_view ns = "default")
      : ObjectBuilder("v1", "Pod", name) {
    obj_.SetNamespace(ns);
    obj_.SetUid(std::string(name) + "-uid");
    obj_.SetCreationTimestamp(At("2026-05-01T10:00:00Z"));
    SetRaw({"spec", "containers"}, R"([{"name":"main","image":"busybox"}])");
  }
  PodBuilder& Label(std::string_view k, std::string_view v) { return obj_.SetLabel(k, v), *this; }
  PodBuilder& Phase(std::string_view p) { return Set({"status", "phase"}, p), *this; }
  PodBuilder& Node(std::string_view n) { return Set({"spec", "nodeName"}, n), *this; }
  PodBuilder& Running(bool ready, int restarts = 0) {
    SetRaw({"status", "containerStatuses"},
           fmt::format(
               R"([{{"name":"main","ready":{},"restartCount":{},"state":{{"running":{{}}}}}}])",
               ready ? "true" : "false", restarts));
    return *this;
  }
  PodBuilder& Terminated(int exit_code, std::string_view reason) {
    SetRaw(
        {"status", "containerStatuses"},
        fmt::format(
            R"([{{"name":"main","ready":false,"restartCount":0,"state":{{"terminated":{{"exitCode":{},"reason":"{}"}}}}}}])",
            exit_code, reason));
    return *this;
  }
  PodBuilder& Waiting(std::string_view reason) {
    SetRaw(
        {"status", "containerStatuses"},
        fmt::format(
            R"([{{"name":"main","ready":false,"restartCount":0,"state":{{"waiting":{{"reason":"{}"}}}}}}])",
            reason));
    return *this;
  }
  PodBuilder& Deleting() { return obj_.SetDeletionTimestamp(At("2026-05-01T10:05:00Z")), *this; }
  api::Pod Build() const { return *api::Pod::Parse(Json()); }
};

class EventBuilder : public ObjectBuilder {
 public:
  EventBuilder(std::string_view name, std::string_view job) : ObjectBuilder("v1", "Event", name) {
    obj_.SetNamespace("default");
    Set({"involvedObject", "kind"}, "Job");
    Set({"involvedObject", "name"}, job);
    Set({"type"}, "Normal");
    Set({"count"}, 1);
  }
  EventBuilder& Type(std::string_view t) { return Set({"type"}, t), *this; }
  EventBuilder& Reason(std::string_view r) { return Set({"reason"}, r), *this; }
  EventBuilder& Message(std::string_view m) { return Set({"message"}, m), *this; }
  EventBuilder& Last(std::string_view t) { return Set({"lastTimestamp"}, t), *this; }
  api::Event Build() const { return *api::Event::Parse(Json()); }
};

// {"kind":"XList","items":[...]} of builders' JSON.
inline std::string ListJson(std::string_view kind, const std::vector<std::string>& items) {
  return fmt::format(
      R"({{"kind":"{}List","apiVersion":"v1","metadata":{{"resourceVersion":"5"}},"items":[{}]}})",
      kind, fmt::join(items, ","));
}

}  // namespace basalt::cli::testing
