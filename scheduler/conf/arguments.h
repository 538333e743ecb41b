#pragma once
// Arguments holds a plugin's or an action's `arguments:` map from the scheduler config, as
// flat keys ("binpack.weight") with their YAML scalar text, and parses typed values on demand
// with Volcano's rules: ints must be integers, floats accept floats or ints, bools accept YAML
// booleans or a parseable string. Value type; const methods are thread-compatible.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace basalt::sched {

class Arguments {
 public:
  Arguments() = default;
  explicit Arguments(std::map<std::string, std::string, std::less<>> values)
      : values_(std::move(values)) {}

  void Set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  bool Has(std::string_view key) const { return values_.find(key) != values_.end(); }
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }

  // Each returns `default_value` if the key is absent, and kInvalidArgument naming the key and
  // the value if it is present but does not parse.
  absl::StatusOr<int64_t> GetInt(std::string_view key, int64_t default_value) const;
  absl::StatusOr<double> GetFloat(std::string_view key, double default_value) const;
  absl::StatusOr<bool> GetBool(std::string_view key, bool default_value) const;
  std::string GetString(std::string_view key, std::string_view default_value) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace basalt::sched
