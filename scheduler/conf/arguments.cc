#include "scheduler/conf/arguments.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "fmt/format.h"

namespace basalt::sched {

namespace {
absl::Status BadValue(std::string_view key, std::string_view value, std::string_view want) {
  return absl::InvalidArgumentError(
      fmt::format("argument {}: value \"{}\" is not {}", key, value, want));
}
}  // namespace

absl::StatusOr<int64_t> Arguments::GetInt(std::string_view key, int64_t default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  const std::string& s = it->second;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return BadValue(key, s, "an integer");
  return v;
}

absl::StatusOr<double> Arguments::GetFloat(std::string_view key, double default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  const std::string& s = it->second;
  if (s.empty()) return BadValue(key, s, "a number");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) {
    return BadValue(key, s, "a number");
  }
  return v;
}

absl::StatusOr<bool> Arguments::GetBool(std::string_view key, bool default_value) const {
  auto it = values_.find(key);
  if (it == values_.end()) return default_value;
  const std::string& s = it->second;
  // YAML 1.1 booleans and Go's strconv.ParseBool spellings.
  for (const char* t : {"true", "True", "TRUE", "t", "T", "1", "yes", "Yes", "on", "On"}) {
    if (s == t) return true;
  }
  for (const char* f : {"false", "False", "FALSE", "f", "F", "0", "no", "No", "off", "Off"}) {
    if (s == f) return false;
  }
  return BadValue(key, s, "a boolean");
}

std::string Arguments::GetString(std::string_view key, std::string_view default_value) const {
  auto it = values_.find(key);
  return it == values_.end() ? std::string(default_value) : it->second;
}

}  // namespace basalt::sched
