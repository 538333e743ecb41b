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

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/util/flags.h"

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

}  // namespace basalt::runtime
