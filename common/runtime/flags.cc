#include "common/runtime/flags.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "common/runtime/version.h"
#include "common/util/duration.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::runtime {
namespace {

absl::Status SetVerbosity(std::string_view text, int* target) {
  int v = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || end != text.data() + text.size() || v < 0) {
    return absl::InvalidArgumentError("want a non-negative integer");
  }
  *target = v;
  return absl::OkStatus();
}

}  // namespace

void RuntimeOptions::AddFlags(FlagSet& flags) {
  flags.String("metrics-addr", &metrics_addr,
               "serve Prometheus /metrics here (\"\" disables; the same address as "
               "--health-addr serves both)");
  flags.String("health-addr", &health_addr, "serve /healthz, /livez, /readyz here (\"\" disables)");
  flags.Func("v", "log verbosity (klog style: -v N, --v=N)", std::to_string(verbosity),
             [this](std::string_view v) { return SetVerbosity(v, &verbosity); });
  flags.Bool("version", &print_version, "print the version and exit");
}

absl::StatusOr<RuntimeOptions> ParseRuntimeFlags(std::vector<std::string>& args,
                                                 RuntimeOptions defaults) {
  return ParseKnownFlags(args, std::move(defaults));
}

bool MaybePrintVersion(const RuntimeOptions& options, std::string_view binary_name,
                       std::FILE* out) {
  if (!options.print_version) return false;
  fmt::print(out, "{}\n", VersionLine(binary_name));
  std::fflush(out);
  return true;
}

int UsageError(std::string_view binary_name, std::string_view message) {
  fmt::print(stderr, "{}: {}\n", binary_name, message);
  return 2;
}

std::optional<int> HandleRuntimeFlags(std::string_view binary_name, std::vector<std::string>& args,
                                      RuntimeOptions* options) {
  absl::StatusOr<RuntimeOptions> parsed = ParseRuntimeFlags(args, *options);
  if (!parsed.ok()) return UsageError(binary_name, MessageOf(parsed.status()));
  *options = *std::move(parsed);
  if (MaybePrintVersion(*options, binary_name)) return 0;
  return std::nullopt;
}

std::string RuntimeFlagsUsage() { return FlagsUsageOf<RuntimeOptions>(); }

std::optional<int> HandleBinaryFlags(std::string_view binary_name, FlagSet& flags,
                                     const std::vector<std::string>& args,
                                     std::string_view extra_usage, std::FILE* out, std::FILE* err) {
  absl::Status s = flags.Parse(args);
  if (s.ok()) return std::nullopt;
  const std::string usage = fmt::format("{}{}{}", flags.Usage(), extra_usage, RuntimeFlagsUsage());
  if (s.code() == absl::StatusCode::kCancelled) {
    fmt::print(out, "{}", usage);
    std::fflush(out);
    return 0;
  }
  fmt::print(err, "{}: {}\n{}", binary_name, MessageOf(s), usage);
  std::fflush(err);
  return 2;
}

absl::Status CheckAtLeast(std::string_view flag, int64_t value, int64_t min) {
  if (value >= min) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("--{}: must be at least {}, got {}", flag, min, value));
}

absl::Status CheckInRange(std::string_view flag, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("--{}: must be in [{}, {}], got {}", flag, min, max, value));
}

absl::Status CheckNotEmpty(std::string_view flag, std::string_view value) {
  if (!value.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format("--{}: must not be empty", flag));
}

absl::StatusOr<std::chrono::milliseconds> ParseDurationFlag(std::string_view flag,
                                                            std::string_view text,
                                                            std::chrono::milliseconds min) {
  absl::StatusOr<std::chrono::nanoseconds> d = ParseGoDuration(text);
  if (!d.ok()) {
    return absl::InvalidArgumentError(fmt::format("--{}: {}", flag, MessageOf(d.status())));
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms < min) {
    return absl::InvalidArgumentError(
        fmt::format("--{}: must be at least {}ms, got {}", flag, min.count(), text));
  }
  return ms;
}

absl::Status FirstError(std::initializer_list<absl::Status> checks) {
  for (const absl::Status& s : checks) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace basalt::runtime
