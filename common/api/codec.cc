#include "common/api/codec.h"

#include <limits>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {

FieldReader::FieldReader(const json::Value* obj, std::string path)
    : FieldReader(obj, std::move(path), std::make_shared<absl::Status>()) {}

FieldReader::FieldReader(const json::Value* obj, std::string path,
                         std::shared_ptr<absl::Status> error)
    : obj_(obj), path_(std::move(path)), error_(std::move(error)) {
  if (obj_ != nullptr && obj_->IsNull()) obj_ = nullptr;
  if (obj_ != nullptr && !obj_->IsObject()) {
    if (error_->ok()) {
      *error_ = absl::InvalidArgumentError(
          fmt::format("{}: must be an object", path_.empty() ? "value" : path_));
    }
    obj_ = nullptr;
  }
}

std::string FieldReader::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

void FieldReader::Fail(std::string_view key, std::string_view what) {
  if (error_->ok()) {
    *error_ = absl::InvalidArgumentError(fmt::format("{}: {}", PathOf(key), what));
  }
}

const json::Value* FieldReader::Get(std::string_view key) const {
  if (obj_ == nullptr) return nullptr;
  const json::Value* v = json::Find(*obj_, key);
  return v == nullptr || v->IsNull() ? nullptr : v;
}

std::string FieldReader::String(std::string_view key) {
  return OptString(key).value_or(std::string());
}

std::optional<std::string> FieldReader::OptString(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) {
    Fail(key, "must be a string");
    return std::nullopt;
  }
  return std::string(json::AsView(*v));
}

int64_t FieldReader::Int(std::string_view key, int64_t def) { return OptInt(key).value_or(def); }

std::optional<int64_t> FieldReader::OptInt(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsInt64()) {
    Fail(key, "must be an integer");
    return std::nullopt;
  }
  return v->GetInt64();
}

int32_t FieldReader::Int32(std::string_view key, int32_t def) {
  return OptInt32(key).value_or(def);
}

std::optional<int32_t> FieldReader::OptInt32(std::string_view key) {
  std::optional<int64_t> v = OptInt(key);
  if (!v.has_value()) return std::nullopt;
  if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
    Fail(key, "must fit in a 32-bit integer");
    return std::nullopt;
  }
  return static_cast<int32_t>(*v);
}

bool FieldReader::Bool(std::string_view key, bool def) { return OptBool(key).value_or(def); }

std::optional<bool> FieldReader::OptBool(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsBool()) {
    Fail(key, "must be a boolean");
    return std::nullopt;
  }
  return v->GetBool();
}

StringMap FieldReader::StringMapAt(std::string_view key) {
  StringMap out;
  const json::Value* v = Get(key);
  if (v == nullptr) return out;
  if (!v->IsObject()) {
    Fail(key, "must be an object of strings");
    return out;
  }
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    if (!it->value.IsString()) {
      Fail(fmt::format("{}.{}", key, json::AsView(it->name)), "must be a string");
      return out;
    }
    out.emplace(json::AsView(it->name), json::AsView(it->value));
  }
  return out;
}

std::vector<std::string> FieldReader::StringList(std::string_view key) {
  std::vector<std::string> out;
  const json::Value* v = Get(key);
  if (v == nullptr) return out;
  if (!v->IsArray()) {
    Fail(key, "must be an array of strings");
    return out;
  }
  for (const json::Value& e : v->GetArray()) {
    if (!e.IsString()) {
      Fail(key, "must be an array of strings");
      return out;
    }
    out.emplace_back(json::AsView(e));
  }
  return out;
}

resource::ResourceList FieldReader::Resources(std::string_view key) {
  return OptResources(key).value_or(resource::ResourceList());
}

std::optional<resource::ResourceList> FieldReader::OptResources(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  auto r = resource::ResourceList::FromJson(*v);
  if (!r.ok()) {
    Fail(key, MessageOf(r.status()));
    return std::nullopt;
  }
  return *std::move(r);
}

std::optional<Time> FieldReader::OptTime(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) {
    Fail(key, "must be an RFC 3339 time string");
    return std::nullopt;
  }
  auto t = ParseRfc3339(json::AsView(*v));
  if (!t.ok()) {
    Fail(key, MessageOf(t.status()));
    return std::nullopt;
  }
  return *t;
}

std::string FieldReader::Raw(std::string_view key) {
  const json::Value* v = Get(key);
  return v == nullptr ? std::string() : json::Serialize(*v);
}

const json::Value* FieldReader::ObjectAt(std::string_view key) {
  const json::Value* v = Get(key);
  if (v != nullptr && !v->IsObject()) {
    Fail(key, "must be an object");
    return nullptr;
  }
  return v;
}

FieldReader FieldReader::Child(std::string_view key) {
  return FieldReader(ObjectAt(key), PathOf(key), error_);
}

std::vector<FieldReader> FieldReader::Elements(std::string_view key) {
  std::vector<FieldReader> out;
  const json::Value* v = Get(key);
  if (v == nullptr) return out;
  if (!v->IsArray()) {
    Fail(key, "must be an array");
    return out;
  }
  size_t i = 0;
  for (const json::Value& e : v->GetArray()) {
    std::string path = fmt::format("{}[{}]", PathOf(key), i++);
    if (!e.IsObject()) {
      if (error_->ok()) *error_ = absl::InvalidArgumentError(path + ": must be an object");
      continue;
    }
    out.push_back(FieldReader(&e, std::move(path), error_));
    out.back().index_ = static_cast<int64_t>(i - 1);
  }
  return out;
}

std::vector<Condition> FieldReader::Conditions(std::string_view key) {
  std::vector<Condition> out;
  for (FieldReader& c : Elements(key)) {
    Condition cond;
    cond.type = c.String("type");
    cond.status = c.String("status");
    cond.reason = c.String("reason");
    cond.message = c.String("message");
    cond.last_transition_time = c.OptTime("lastTransitionTime");
    cond.last_probe_time = c.OptTime("lastProbeTime");
    cond.transition_id = c.String("transitionID");
    out.push_back(std::move(cond));
  }
  return out;
}

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
