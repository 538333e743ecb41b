#pragma once
// Builders for the informer unit tests: ConfigMaps, Pods, LIST bodies and watch lines.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/informer/object.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::informer::testing {

class ConfigMapBuilder {
 public:
  ConfigMapBuilder(std::string ns, std::string name) : ns_(std::move(ns)), name_(std::move(name)) {}
  ConfigMapBuilder& ResourceVersion(std::string rv) {
    rv_ = std::move(rv);
    return *this;
  }
  ConfigMapBuilder& Label(std::string k, std::string v) {
    labels_[std::move(k)] = std::move(v);
    return *this;
  }
  ConfigMapBuilder& Data(std::string k, std::string v) {
    data_[std::move(k)] = std::move(v);
    return *this;
  }
  std::string Json() const {
    std::string labels;
    for (const auto& [k, v] : labels_) {
      labels += fmt::format("{}\"{}\":\"{}\"", labels.empty() ? "" : ",", k, v);
    }
    std::string data;
    for (const auto& [k, v] : data_) {
      data += fmt::format("{}\"{}\":\"{}\"", data.empty() ? "" : ",", k, v);
    }
    std::string ns = ns_.empty() ? "" : fmt::format("\"namespace\":\"{}\",", ns_);
    return fmt::format(
        R"({{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{}",{}"resourceVersion":"{}","labels":{{{}}}}},"data":{{{}}}}})",
        name_, ns, rv_, labels, data);
  }
  json::Document Doc() const { return *json::Parse(Json()); }
  Object Obj() const { return *Transform().Apply(Doc()); }

 private:
  std::string ns_, name_, rv_ = "1";
  std::map<std::string, std::string> labels_, data_;
};

inline ConfigMapBuilder MakeConfigMap(std::string ns, std::string name) {
  return ConfigMapBuilder(std::move(ns), std::move(name));
}

// {"kind":"ConfigMapList",...} with `items` (JSON objects).
inline std::string ListBody(std::string_view rv, const std::vector<std::string>& items,
                            std::string_view continue_token = "") {
  std::string joined;
  for (const std::string& i : items) joined += (joined.empty() ? "" : ",") + i;
  return fmt::format(
      R"({{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"{}","continue":"{}"}},"items":[{}]}})",
      rv, continue_token, joined);
}

// One watch line (with its trailing newline).
inline std::string WatchLine(std::string_view type, const std::string& object_json) {
  return fmt::format(R"({{"type":"{}","object":{}}})", type, object_json) + "\n";
}
inline std::string BookmarkLine(std::string_view rv) {
  return WatchLine(
      "BOOKMARK",
      fmt::format(
          R"({{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"resourceVersion":"{}"}}}})", rv));
}
inline std::string GoneLine() {
  return WatchLine(
      "ERROR",
      R"j({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (20)","reason":"Expired","code":410})j");
}

}  // namespace basalt::informer::testing
