#pragma once
// Field readers and writers shared by the typed kinds of common/api. Internal to the api
// library, but usable by any code that decodes Kubernetes-style JSON.
//
// FieldReader reads members of one JSON object and records the first type error with its
// full path ("spec.tasks[1].replicas: must be an integer"); absent and null members read as
// defaults. Readers created with Child/Elements share the error slot of their root.
// Not thread-safe; use on one thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/api/object.h"
#include "common/api/time.h"
#include "common/resource/resource_list.h"
#include "common/util/json.h"

namespace basalt::api {

class FieldReader {
 public:
  // `obj` may be null (everything reads as absent). `path` prefixes error messages.
  FieldReader(const json::Value* obj, std::string path);

  // OK, or the first error seen by this reader or any reader derived from it.
  absl::Status status() const { return *error_; }
  bool ok() const { return error_->ok(); }
  const json::Value* value() const { return obj_; }
  // Where this reader's object is in the document ("spec.tasks[1]"), as in error messages.
  const std::string& path() const { return path_; }
  // For a reader from Elements(): the position of its object in the array (elements that
  // are not objects are skipped, so positions may jump); -1 otherwise.
  int64_t index() const { return index_; }
  // Whether member `key` is present and not JSON null.
  bool Has(std::string_view key) const { return Get(key) != nullptr; }
  // Member `key` of any type, or null when absent or JSON null (for checks that need the raw
  // value, e.g. a validator reporting a wrong type with its own wording).
  const json::Value* Member(std::string_view key) const { return Get(key); }

  std::string String(std::string_view key);
  std::optional<std::string> OptString(std::string_view key);
  int64_t Int(std::string_view key, int64_t def = 0);
  std::optional<int64_t> OptInt(std::string_view key);
  // As Int/OptInt, but the value must fit in int32 (Kubernetes int32 fields).
  int32_t Int32(std::string_view key, int32_t def = 0);
  std::optional<int32_t> OptInt32(std::string_view key);
  bool Bool(std::string_view key, bool def = false);
  std::optional<bool> OptBool(std::string_view key);
  StringMap StringMapAt(std::string_view key);
  std::vector<std::string> StringList(std::string_view key);
  resource::ResourceList Resources(std::string_view key);
  std::optional<resource::ResourceList> OptResources(std::string_view key);
  std::optional<Time> OptTime(std::string_view key);
  // The member serialized as compact JSON, "" when absent or null.
  std::string Raw(std::string_view key);
  // The member if it is an object (error if present with another type).
  const json::Value* ObjectAt(std::string_view key);
  // A reader over the nested object `key` (absent reads as empty).
  FieldReader Child(std::string_view key);
  // Readers over the objects of array `key` (error if an element is not an object).
  std::vector<FieldReader> Elements(std::string_view key);
  // Conditions at `key` (an array of condition objects).
  std::vector<Condition> Conditions(std::string_view key);

  void Fail(std::string_view key, std::string_view what);

 private:
  FieldReader(const json::Value* obj, std::string path, std::shared_ptr<absl::Status> error);
  // The member, or null when absent or JSON null.
  const json::Value* Get(std::string_view key) const;
  std::string PathOf(std::string_view key) const;

  const json::Value* obj_;
  std::string path_;
  std::shared_ptr<absl::Status> error_;
  int64_t index_ = -1;
};

// Removes obj[key] if present, keeping the order of the other members (json::Remove moves
// the last member into the gap, which reorders objects users diff).
void EraseMember(json::Value& obj, std::string_view key);

// Writers: set obj[key] (obj must be an object), replacing an existing member.
void WriteString(json::Value& obj, std::string_view key, std::string_view v, json::Allocator& a);
void WriteInt(json::Value& obj, std::string_view key, int64_t v, json::Allocator& a);
void WriteBool(json::Value& obj, std::string_view key, bool v, json::Allocator& a);
void WriteStringMap(json::Value& obj, std::string_view key, const StringMap& m, json::Allocator& a);
void WriteStringList(json::Value& obj, std::string_view key, const std::vector<std::string>& l,
                     json::Allocator& a);
void WriteResources(json::Value& obj, std::string_view key, const resource::ResourceList& r,
                    json::Allocator& a);
void WriteTime(json::Value& obj, std::string_view key, Time t, json::Allocator& a);
void WriteMicroTime(json::Value& obj, std::string_view key, Time t, json::Allocator& a);
void WriteConditions(json::Value& obj, std::string_view key, const std::vector<Condition>& c,
                     json::Allocator& a);
// Parses `raw` JSON and stores it at obj[key]; removes the member when `raw` is empty.
absl::Status WriteRaw(json::Value& obj, std::string_view key, std::string_view raw,
                      json::Allocator& a);

// Optional helpers: set when engaged, remove when not.
void WriteOptInt(json::Value& obj, std::string_view key, const std::optional<int64_t>& v,
                 json::Allocator& a);
void WriteOptString(json::Value& obj, std::string_view key, std::string_view v,
                    json::Allocator& a);  // removes when empty
void WriteOptTime(json::Value& obj, std::string_view key, const std::optional<Time>& t,
                  json::Allocator& a);

}  // namespace basalt::api
