#pragma once
// Field readers and writers shared by the typed kinds of common/api. Internal to the api
// library, but usable by any code that decodes Kubernetes-style JSON. FieldReader (the
// reader) is in field_reader.h, included here.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/api/field_reader.h"
#include "common/api/object.h"
#include "common/api/time.h"
#include "common/resource/resource_list.h"
#include "common/util/json.h"

namespace basalt::api {

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
