#pragma once
// Structured, leveled logging in the klog manner: `-v N` sets the verbosity; BASALT_VLOG(N)
// lines appear only when N <= verbosity. Messages take key/value pairs:
//
//   BASALT_LOG_INFO("Synced informer", "resource", "pods", "items", n);
//   BASALT_VLOG(4, "Queued key", "key", key);
//
// Output: `I1129 16:40:49.123456 Synced informer resource="pods" items=42` on stderr.
// Thread-safe. Nothing here is meant for per-item hot loops above -v 4.

#include <atomic>
#include <string>
#include <string_view>

#include "fmt/format.h"

namespace basalt::log {

enum class Severity { kInfo, kWarning, kError };

int Verbosity();
void SetVerbosity(int v);
inline bool VEnabled(int level) { return level <= Verbosity(); }

// Writes one line. `kv` is the already formatted ` key=value ...` suffix.
void Write(Severity severity, std::string_view msg, std::string_view kv);

namespace internal {
inline void AppendValue(std::string& out, std::string_view v) {
  out += '"';
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}
inline void AppendValue(std::string& out, const std::string& v) {
  AppendValue(out, std::string_view(v));
}
inline void AppendValue(std::string& out, const char* v) { AppendValue(out, std::string_view(v)); }
inline void AppendValue(std::string& out, bool v) { out += v ? "true" : "false"; }
template <typename T>
void AppendValue(std::string& out, const T& v) {
  fmt::format_to(std::back_inserter(out), "{}", v);
}

inline void AppendKV(std::string&) {}
template <typename V, typename... Rest>
void AppendKV(std::string& out, std::string_view key, const V& value, const Rest&... rest) {
  out += ' ';
  out += key;
  out += '=';
  AppendValue(out, value);
  AppendKV(out, rest...);
}
}  // namespace internal

template <typename... KV>
void Log(Severity severity, std::string_view msg, const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "log key/value arguments must come in pairs");
  std::string suffix;
  internal::AppendKV(suffix, kv...);
  Write(severity, msg, suffix);
}

}  // namespace basalt::log

#define BASALT_LOG_INFO(...) ::basalt::log::Log(::basalt::log::Severity::kInfo, __VA_ARGS__)
#define BASALT_LOG_WARNING(...) ::basalt::log::Log(::basalt::log::Severity::kWarning, __VA_ARGS__)
#define BASALT_LOG_ERROR(...) ::basalt::log::Log(::basalt::log::Severity::kError, __VA_ARGS__)
#define BASALT_VLOG(level, ...)                                        \
  do {                                                                 \
    if (::basalt::log::VEnabled(level))                                \
      ::basalt::log::Log(::basalt::log::Severity::kInfo, __VA_ARGS__); \
  } while (0)
