#include "unit-tests/webhook/testing/builders.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/util/status.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "webhook/json_patch.h"

namespace basalt::webhook::testing {
namespace {

[[noreturn]] void Fail(std::string_view what) {
  std::fprintf(stderr, "test builder error: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

json::Document MustParse(std::string_view text) {
  auto doc = json::Parse(text);
  if (!doc.ok()) Fail(MessageOf(doc.status()));
  return std::move(*doc);
}

void WriteSorted(const json::Value& v, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (v.IsObject()) {
    std::vector<const json::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(),
              [](auto* a, auto* b) { return json::AsView(a->name) < json::AsView(b->name); });
    w.StartObject();
    for (const auto* m : members) {
      w.String(m->name.GetString(), m->name.GetStringLength());
      WriteSorted(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& e : v.GetArray()) WriteSorted(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

constexpr std::string_view kBertJob = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1",
  "kind": "Job",
  "metadata": {"name": "bert-pretrain", "namespace": "default"},
  "spec": {
    "minAvailable": 4,
    "schedulerName": "volcano",
    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
    "tasks": [{
      "name": "worker",
      "replicas": 4,
      "template": {"spec": {
        "containers": [{
          "name": "training",
          "image": "your-registry/train:latest",
          "resources": {
            "requests": {"cpu": 8, "memory": "64Gi", "nvidia.com/gpu": 1},
            "limits": {"cpu": 8, "memory": "64Gi", "nvidia.com/gpu": 1}
          }
        }],
        "restartPolicy": "OnFailure"
      }}
    }]
  }
})";

constexpr std::string_view kAiTrainingQueue = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1",
  "kind": "Queue",
  "metadata": {"name": "ai-training"},
  "spec": {
    "weight": 10,
    "capability": {"cpu": 200, "memory": "500Gi", "nvidia.com/gpu": 8}
  }
})";

constexpr std::string_view kPodGroup = R"({
  "apiVersion": "scheduling.volcano.sh/v1beta1",
  "kind": "PodGroup",
  "metadata": {"name": "pg1", "namespace": "team-a"},
  "spec": {"minMember": 2}
})";

constexpr std::string_view kPod = R"({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "p1", "namespace": "team-a"},
  "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]}
})";

}  // namespace

JsonBuilder::JsonBuilder(std::string_view json) : doc_(MustParse(json)) {}

JsonBuilder::JsonBuilder(const JsonBuilder& other) {
  doc_.CopyFrom(other.doc_, doc_.GetAllocator());
}

JsonBuilder& JsonBuilder::operator=(const JsonBuilder& other) {
  if (this != &other) doc_.CopyFrom(other.doc_, doc_.GetAllocator());
  return *this;
}

JsonBuilder& JsonBuilder::Set(std::string_view pointer, std::string_view json_value) {
  // Create missing parent objects, then "add" the value.
  auto& a = doc_.GetAllocator();
  json::Value* cur = &doc_;
  size_t pos = 1;
  while (true) {
    size_t next = pointer.find('/', pos);
    if (next == std::string_view::npos) break;
    std::string token(pointer.substr(pos, next - pos));
    json::Value* child = nullptr;
    if (cur->IsArray()) {
      size_t idx = std::stoul(token);
      if (idx >= cur->Size()) Fail(pointer);
      child = &(*cur)[static_cast<rapidjson::SizeType>(idx)];
    } else if (json::Value* existing = json::FindMutable(*cur, token)) {
      child = existing;
    } else {
      child = &json::EnsureObject(*cur, token, a);
    }
    cur = child;
    pos = next + 1;
  }
  json::Document value = MustParse(json_value);
  std::string patch = "[{\"op\":\"add\",\"path\":" + json::Serialize(json::MakeString(pointer, a)) +
                      ",\"value\":" + json::Serialize(value) + "}]";
  absl::Status s = ApplyJsonPatch(doc_, patch);
  if (!s.ok()) Fail(MessageOf(s));
  return *this;
}

JsonBuilder& JsonBuilder::SetString(std::string_view pointer, std::string_view value) {
  json::Document tmp;
  return Set(pointer, json::Serialize(json::MakeString(value, tmp.GetAllocator())));
}

JsonBuilder& JsonBuilder::Remove(std::string_view pointer) {
  json::Document tmp;
  std::string patch = "[{\"op\":\"remove\",\"path\":" +
                      json::Serialize(json::MakeString(pointer, tmp.GetAllocator())) + "}]";
  absl::Status s = ApplyJsonPatch(doc_, patch);
  if (!s.ok()) Fail(MessageOf(s));
  return *this;
}

std::string JsonBuilder::Json() const { return json::Serialize(doc_); }

JsonBuilder BertJob() { return JsonBuilder(kBertJob); }

JsonBuilder MutatedBertJob() {
  return BertJob()
      .SetString("/spec/queue", "default")
      .Set("/spec/maxRetry", "3")
      .Set("/spec/tasks/0/minAvailable", "4")
      .Set("/spec/tasks/0/maxRetry", "3");
}

JsonBuilder AiTrainingQueue() { return JsonBuilder(kAiTrainingQueue); }
JsonBuilder SimplePodGroup() { return JsonBuilder(kPodGroup); }
JsonBuilder SimplePod() { return JsonBuilder(kPod); }

AdmissionResponse Run(const AdmissionHandler& handler, Operation op, const std::string& object,
                      const std::string& old_object) {
  auto request = MakeAdmissionRequest(op, object, old_object);
  if (!request.ok()) Fail(MessageOf(request.status()));
  return handler.Handle(*request);
}

std::string ApplyPatch(std::string_view object, const AdmissionResponse& response) {
  json::Document doc = MustParse(object);
  if (!response.patch.empty()) {
    absl::Status s = ApplyJsonPatch(doc, response.patch);
    if (!s.ok()) Fail(MessageOf(s));
  }
  return Canonical(json::Serialize(doc));
}

std::string Canonical(std::string_view json) {
  json::Document doc = MustParse(json);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  WriteSorted(doc, w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace basalt::webhook::testing
