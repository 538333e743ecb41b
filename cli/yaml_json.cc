#include "cli/yaml_json.h"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <vector>

#include "common/util/json.h"
#include "fmt/format.h"
#include "rapidjson/document.h"
#include "yaml-cpp/yaml.h"

namespace basalt::cli {
namespace {

bool IsNull(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> AsBool(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

std::optional<int64_t> AsInt(const std::string& s) {
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> AsFloat(const std::string& s) {
  // Digits with one '.' and/or an exponent; YAML's .inf/.nan are not JSON values.
  bool digit = false, dot = false, exp = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digit && !exp) {
      exp = true;
      if (i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+')) ++i;
    } else if ((c == '-' || c == '+') && i == 0) {
    } else {
      return std::nullopt;
    }
  }
  if (!digit || (!dot && !exp)) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

absl::StatusOr<json::Value> Convert(const YAML::Node& node, json::Allocator& a) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return json::Value(rapidjson::kNullType);
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      // "!" is the tag of a quoted (non-plain) scalar: always a string.
      if (node.Tag() != "!") {
        if (IsNull(s)) return json::Value(rapidjson::kNullType);
        if (std::optional<bool> b = AsBool(s)) return json::Value(*b);
        if (std::optional<int64_t> i = AsInt(s)) return json::Value(*i);
        if (std::optional<double> d = AsFloat(s)) return json::Value(*d);
      }
      return json::MakeString(s, a);
    }
    case YAML::NodeType::Sequence: {
      json::Value arr(rapidjson::kArrayType);
      for (const YAML::Node& item : node) {
        absl::StatusOr<json::Value> v = Convert(item, a);
        if (!v.ok()) return v.status();
        arr.PushBack(std::move(*v), a);
      }
      return arr;
    }
    case YAML::NodeType::Map: {
      json::Value obj(rapidjson::kObjectType);
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return absl::InvalidArgumentError(
              fmt::format("line {}: a mapping key must be a scalar", kv.first.Mark().line + 1));
        }
        absl::StatusOr<json::Value> v = Convert(kv.second, a);
        if (!v.ok()) return v.status();
        json::Set(obj, kv.first.Scalar(), std::move(*v), a);
      }
      return obj;
    }
  }
  return json::Value(rapidjson::kNullType);
}

}  // namespace

absl::StatusOr<std::string> YamlToJson(std::string_view yaml) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("line {}, column {}: {}", e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  std::vector<YAML::Node> non_empty;
  for (const YAML::Node& d : docs) {
    if (!d.IsNull()) non_empty.push_back(d);
  }
  if (non_empty.empty()) return absl::InvalidArgumentError("the file holds no object");
  if (non_empty.size() > 1) {
    return absl::InvalidArgumentError(
        fmt::format("the file holds {} documents; give one Job per file", non_empty.size()));
  }
  if (!non_empty[0].IsMap()) {
    return absl::InvalidArgumentError("the document is not a mapping (an object)");
  }
  json::Document doc;
  absl::StatusOr<json::Value> v;
  try {
    v = Convert(non_empty[0], doc.GetAllocator());
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("line {}: {}", e.mark.line + 1, e.msg));
  }
  if (!v.ok()) return v.status();
  return json::Serialize(*v);
}

}  // namespace basalt::cli
