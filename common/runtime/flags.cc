#include "common/runtime/flags.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "common/runtime/version.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::runtime {
namespace {

enum class Flag { kMetricsAddr, kHealthAddr, kVerbosity, kVersion };

// Maps a flag name (without dashes) to a runtime flag.
std::optional<Flag> Lookup(std::string_view name) {
  if (name == "metrics-addr") return Flag::kMetricsAddr;
  if (name == "health-addr") return Flag::kHealthAddr;
  if (name == "v") return Flag::kVerbosity;
  if (name == "version") return Flag::kVersion;
  return std::nullopt;
}

absl::StatusOr<int> ParseVerbosity(std::string_view text) {
  int v = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || end != text.data() + text.size() || v < 0) {
    return absl::InvalidArgumentError(
        fmt::format("-v: want a non-negative integer, got \"{}\"", text));
  }
  return v;
}

}  // namespace

absl::StatusOr<RuntimeOptions> ParseRuntimeFlags(std::vector<std::string>& args,
                                                 RuntimeOptions defaults) {
  RuntimeOptions options = std::move(defaults);
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") {  // Everything after belongs to the binary.
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    std::string_view body;
    if (arg.starts_with("--")) {
      body = arg.substr(2);
    } else if (arg.starts_with("-")) {
      body = arg.substr(1);
    } else {
      rest.emplace_back(arg);
      continue;
    }
    const std::size_t eq = body.find('=');
    const std::string_view name = body.substr(0, eq);
    const std::optional<Flag> flag = Lookup(name);
    // Single-dash spellings are accepted only for -v (klog's form); "-version" is not ours.
    if (!flag || (!arg.starts_with("--") && *flag != Flag::kVerbosity)) {
      rest.emplace_back(arg);
      continue;
    }
    if (*flag == Flag::kVersion) {
      if (eq != std::string_view::npos) {
        return absl::InvalidArgumentError("--version takes no value");
      }
      options.print_version = true;
      continue;
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(fmt::format("{}: missing value", arg));
    }
    switch (*flag) {
      case Flag::kMetricsAddr:
        options.metrics_addr = std::move(value);
        break;
      case Flag::kHealthAddr:
        options.health_addr = std::move(value);
        break;
      case Flag::kVerbosity: {
        absl::StatusOr<int> v = ParseVerbosity(value);
        if (!v.ok()) return v.status();
        options.verbosity = *v;
        break;
      }
      case Flag::kVersion:
        break;
    }
  }
  args = std::move(rest);
  return options;
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

std::string RuntimeFlagsUsage() {
  return "  --metrics-addr=HOST:PORT  serve Prometheus /metrics here (\"\" disables; default "
         ":8080)\n"
         "  --health-addr=HOST:PORT   serve /healthz, /livez, /readyz here (\"\" disables; "
         "default :8081)\n"
         "  -v, --v=N                 log verbosity (default 0)\n"
         "  --version                 print the version and exit\n";
}

}  // namespace basalt::runtime
