#include "common/util/json.h"

#include "fmt/format.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace basalt::json {

absl::StatusOr<Document> Parse(std::string_view text) {
  Document d;
  d.Parse<rapidjson::kParseStopWhenDoneFlag>(text.data(), text.size());
  if (d.HasParseError()) {
    return absl::InvalidArgumentError(fmt::format("invalid JSON at offset {}: {}",
                                                  d.GetErrorOffset(),
                                                  rapidjson::GetParseError_En(d.GetParseError())));
  }
  return d;
}

std::string Serialize(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

const Value* Find(const Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

Value* FindMutable(Value& obj, std::string_view key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

const Value* FindPath(const Value& obj, std::initializer_list<std::string_view> path) {
  const Value* cur = &obj;
  for (std::string_view k : path) {
    cur = Find(*cur, k);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

std::string_view GetString(const Value& obj, std::string_view key, std::string_view def) {
  const Value* v = Find(obj, key);
  return v != nullptr && v->IsString() ? AsView(*v) : def;
}

int64_t GetInt(const Value& obj, std::string_view key, int64_t def) {
  const Value* v = Find(obj, key);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : def;
}

bool GetBool(const Value& obj, std::string_view key, bool def) {
  const Value* v = Find(obj, key);
  return v != nullptr && v->IsBool() ? v->GetBool() : def;
}

std::optional<int64_t> GetOptionalInt(const Value& obj, std::string_view key) {
  const Value* v = Find(obj, key);
  if (v == nullptr || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

std::optional<std::string_view> GetOptionalString(const Value& obj, std::string_view key) {
  const Value* v = Find(obj, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return AsView(*v);
}

absl::StatusOr<std::string_view> RequireString(const Value& obj, std::string_view key) {
  const Value* v = Find(obj, key);
  if (v == nullptr) return absl::InvalidArgumentError(fmt::format("missing field \"{}\"", key));
  if (!v->IsString()) {
    return absl::InvalidArgumentError(fmt::format("field \"{}\" must be a string", key));
  }
  return AsView(*v);
}

absl::StatusOr<int64_t> RequireInt(const Value& obj, std::string_view key) {
  const Value* v = Find(obj, key);
  if (v == nullptr) return absl::InvalidArgumentError(fmt::format("missing field \"{}\"", key));
  if (!v->IsInt64()) {
    return absl::InvalidArgumentError(fmt::format("field \"{}\" must be an integer", key));
  }
  return v->GetInt64();
}

void Set(Value& obj, std::string_view key, Value value, Allocator& a) {
  if (Value* existing = FindMutable(obj, key)) {
    *existing = std::move(value);
    return;
  }
  obj.AddMember(MakeString(key, a), std::move(value), a);
}

Value& EnsureObject(Value& obj, std::string_view key, Allocator& a) {
  Value* existing = FindMutable(obj, key);
  if (existing != nullptr) {
    if (!existing->IsObject()) existing->SetObject();
    return *existing;
  }
  obj.AddMember(MakeString(key, a), Value(rapidjson::kObjectType), a);
  return *FindMutable(obj, key);
}

void Remove(Value& obj, std::string_view key) {
  if (!obj.IsObject()) return;
  // EraseMember keeps the order of the remaining members (RemoveMember moves the last one
  // into the gap), so a re-encoded object reads the way the user wrote it.
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it != obj.MemberEnd()) obj.EraseMember(it);
}

}  // namespace basalt::json
