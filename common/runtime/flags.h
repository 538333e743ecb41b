#pragma once
// The command-line flags every long-running Basalt binary shares:
//
//   --metrics-addr=HOST:PORT   Prometheus /metrics ("" disables)         default :8080
//   --health-addr=HOST:PORT    /healthz, /livez, /readyz ("" disables)   default :8081
//                              (the same address as --metrics-addr serves both on one port)
//   -v N, --v=N                log verbosity (klog style)                default 0
//   --version                  print the version and exit
//
// ParseRuntimeFlags takes these out of the argument list and leaves the binary's own flags,
// in order, for its parser; both are the one FlagSet of common/util/flags.h (`--flag=value`,
// `--flag value`, `-flag`).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/util/flags.h"
#include "common/util/status.h"

namespace basalt::runtime {

struct RuntimeOptions {
  std::string metrics_addr = ":8080";
  std::string health_addr = ":8081";
  int verbosity = 0;
  bool print_version = false;

  // Registers the flags above, writing into this struct.
  void AddFlags(FlagSet& flags);
};

// Removes the runtime flags from `args` (argv without argv[0]) and returns them applied
// over `defaults`. kInvalidArgument for a runtime flag with a missing or malformed value.
absl::StatusOr<RuntimeOptions> ParseRuntimeFlags(std::vector<std::string>& args,
                                                 RuntimeOptions defaults = {});

// For main(): if --version was given, prints VersionLine(binary_name) and a newline to `out`
// and returns true (the caller then exits 0).
bool MaybePrintVersion(const RuntimeOptions& options, std::string_view binary_name,
                       std::FILE* out = stdout);

// Help text for the runtime flags (FlagSet::FlagsUsage), for the binary's usage message.
std::string RuntimeFlagsUsage();

// For main(): prints "<binary>: <message>" and returns 2, the exit code of a usage error.
int UsageError(std::string_view binary_name, std::string_view message);

// For main(): takes the runtime flags out of `args` into `*options`. Returns the exit code when
// the process must stop at once — 0 after printing --version, 2 after a UsageError — else
// nullopt.
std::optional<int> HandleRuntimeFlags(std::string_view binary_name, std::vector<std::string>& args,
                                      RuntimeOptions* options);

// For main(): takes the flags of an options struct with `AddFlags(FlagSet&)` (e.g.
// ctrlkit::LeaderElectionFlags) out of `args` into `*options` (ParseKnownFlags). Returns 2
// after a UsageError for a malformed value, else nullopt.
template <typename Options>
std::optional<int> TakeFlags(std::string_view binary_name, std::vector<std::string>& args,
                             Options* options) {
  absl::StatusOr<Options> parsed = ParseKnownFlags(args, *options);
  if (!parsed.ok()) return UsageError(binary_name, MessageOf(parsed.status()));
  *options = *std::move(parsed);
  return std::nullopt;
}

// For main(): parses the rest of `args` with the binary's own FlagSet (after
// HandleRuntimeFlags and TakeFlags). The usage is flags.Usage(), `extra_usage` (the help of the
// flags taken earlier) and RuntimeFlagsUsage(). --help/-h prints it to stdout and returns 0; a
// parse error prints "<binary>: <message>" and the usage to stderr and returns 2; else nullopt.
std::optional<int> HandleBinaryFlags(std::string_view binary_name, FlagSet& flags,
                                     const std::vector<std::string>& args,
                                     std::string_view extra_usage = "", std::FILE* out = stdout,
                                     std::FILE* err = stderr);

// Checks of a flag's value after parsing, all with one message format naming the flag and the
// rule: "--qps: must be at least 1, got 0", "--workers: must be in [1, 256], got 0",
// "--listen-address: must not be empty". OK when the value passes.
absl::Status CheckAtLeast(std::string_view flag, int64_t value, int64_t min);
absl::Status CheckInRange(std::string_view flag, int64_t value, int64_t min, int64_t max);
absl::Status CheckNotEmpty(std::string_view flag, std::string_view value);
// A Go duration (common/util/duration.h) at least `min` (ParseGoDuration's message on a syntax
// error, "--schedule-period: must be at least 1ms, got 0s" below `min`), in milliseconds.
absl::StatusOr<std::chrono::milliseconds> ParseDurationFlag(
    std::string_view flag, std::string_view text,
    std::chrono::milliseconds min = std::chrono::milliseconds(0));

// The first failed check of a Validate(): `FirstError({CheckAtLeast(...), CheckInRange(...)})`
// (every check is evaluated; they are cheap).
absl::Status FirstError(std::initializer_list<absl::Status> checks);

}  // namespace basalt::runtime
