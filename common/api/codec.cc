#include "common/api/codec.h"

#include <limits>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {

void EraseMember(json::Value& obj, std::string_view key) {
  if (!obj.IsObject()) return;
  auto it = obj.FindMember(json::Value(rapidjson::StringRef(key.data(), key.size())));
  if (it != obj.MemberEnd()) obj.EraseMember(it);
}

void WriteString(json::Value& obj, std::string_view key, std::string_view v, json::Allocator& a) {
  json::Set(obj, key, json::MakeString(v, a), a);
}

void WriteInt(json::Value& obj, std::string_view key, int64_t v, json::Allocator& a) {
  json::Set(obj, key, json::Value(v), a);
}

void WriteBool(json::Value& obj, std::string_view key, bool v, json::Allocator& a) {
  json::Set(obj, key, json::Value(v), a);
}

void WriteStringMap(json::Value& obj, std::string_view key, const StringMap& m,
                    json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  for (const auto& [k, val] : m) v.AddMember(json::MakeString(k, a), json::MakeString(val, a), a);
  json::Set(obj, key, std::move(v), a);
}

void WriteStringList(json::Value& obj, std::string_view key, const std::vector<std::string>& l,
                     json::Allocator& a) {
  json::Value v(rapidjson::kArrayType);
  for (const std::string& s : l) v.PushBack(json::MakeString(s, a), a);
  json::Set(obj, key, std::move(v), a);
}

void WriteResources(json::Value& obj, std::string_view key, const resource::ResourceList& r,
                    json::Allocator& a) {
  json::Set(obj, key, r.ToJson(a), a);
}

void WriteTime(json::Value& obj, std::string_view key, Time t, json::Allocator& a) {
  WriteString(obj, key, FormatRfc3339(t), a);
}

void WriteMicroTime(json::Value& obj, std::string_view key, Time t, json::Allocator& a) {
  WriteString(obj, key, FormatRfc3339Micro(t), a);
}

void WriteConditions(json::Value& obj, std::string_view key, const std::vector<Condition>& c,
                     json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (const Condition& cond : c) {
    json::Value v(rapidjson::kObjectType);
    WriteString(v, "type", cond.type, a);
    WriteString(v, "status", cond.status, a);
    WriteOptString(v, "reason", cond.reason, a);
    WriteOptString(v, "message", cond.message, a);
    WriteOptString(v, "transitionID", cond.transition_id, a);
    WriteOptTime(v, "lastTransitionTime", cond.last_transition_time, a);
    WriteOptTime(v, "lastProbeTime", cond.last_probe_time, a);
    arr.PushBack(std::move(v), a);
  }
  json::Set(obj, key, std::move(arr), a);
}

absl::Status WriteRaw(json::Value& obj, std::string_view key, std::string_view raw,
                      json::Allocator& a) {
  if (raw.empty()) {
    EraseMember(obj, key);
    return absl::OkStatus();
  }
  BASALT_ASSIGN_OR_RETURN(json::Document d, json::Parse(raw));
  json::Set(obj, key, json::Value(d, a), a);
  return absl::OkStatus();
}

void WriteOptInt(json::Value& obj, std::string_view key, const std::optional<int64_t>& v,
                 json::Allocator& a) {
  if (v.has_value()) {
    WriteInt(obj, key, *v, a);
  } else {
    EraseMember(obj, key);
  }
}

void WriteOptString(json::Value& obj, std::string_view key, std::string_view v,
                    json::Allocator& a) {
  if (!v.empty()) {
    WriteString(obj, key, v, a);
  } else {
    EraseMember(obj, key);
  }
}

void WriteOptTime(json::Value& obj, std::string_view key, const std::optional<Time>& t,
                  json::Allocator& a) {
  if (t.has_value()) {
    WriteTime(obj, key, *t, a);
  } else {
    EraseMember(obj, key);
  }
}

}  // namespace basalt::api
