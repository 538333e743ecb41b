#pragma once
// Safe accessors over RapidJSON for untrusted input (API server responses, admission
// requests). Never use rapidjson's operator[] on input: a missing member asserts. These
// helpers return nullptr / defaults / Status instead.
//
// RAPIDJSON_HAS_STDSTRING is set for every TU through the basalt_util target.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace basalt::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;
using Allocator = rapidjson::Document::AllocatorType;

// Parses `text` into a document. The error names the offset and RapidJSON's reason.
absl::StatusOr<Document> Parse(std::string_view text);

// Serializes compactly.
std::string Serialize(const Value& v);

// Member lookup; nullptr when `obj` is not an object or lacks `key`.
const Value* Find(const Value& obj, std::string_view key);
Value* FindMutable(Value& obj, std::string_view key);
// Walks nested objects: FindPath(pod, {"spec", "nodeName"}).
const Value* FindPath(const Value& obj, std::initializer_list<std::string_view> path);

// Typed getters with defaults for absent or mistyped members.
std::string_view GetString(const Value& obj, std::string_view key, std::string_view def = {});
int64_t GetInt(const Value& obj, std::string_view key, int64_t def = 0);
bool GetBool(const Value& obj, std::string_view key, bool def = false);
std::optional<int64_t> GetOptionalInt(const Value& obj, std::string_view key);
std::optional<std::string_view> GetOptionalString(const Value& obj, std::string_view key);

// Typed getters that report a missing or mistyped field, naming `key`.
absl::StatusOr<std::string_view> RequireString(const Value& obj, std::string_view key);
absl::StatusOr<int64_t> RequireInt(const Value& obj, std::string_view key);

inline std::string_view AsView(const Value& v) {
  return v.IsString() ? std::string_view(v.GetString(), v.GetStringLength()) : std::string_view();
}

// Builders.
inline Value MakeString(std::string_view s, Allocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}
// Sets obj[key] = value (replacing an existing member). `obj` must be an object.
void Set(Value& obj, std::string_view key, Value value, Allocator& a);
// Returns obj[key], creating it as an empty object when absent or not an object.
Value& EnsureObject(Value& obj, std::string_view key, Allocator& a);
// Removes obj[key] if present, keeping the order of the other members.
void Remove(Value& obj, std::string_view key);

}  // namespace basalt::json
