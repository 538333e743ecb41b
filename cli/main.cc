// vcctl: Volcano's command line (jobs, queues, podgroups, pods) for Basalt, and a CI step:
// `vcctl job run -f job.yaml --wait [--timeout 2h] [--logs TASK]` exits with the Job's outcome.
// Commands, flags and exit codes: docs/vcctl.md.

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/wait.h"
#include "common/client/client.h"
#include "common/util/status.h"

int main(int argc, char** argv) {
  using namespace basalt::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<Options> options = ParseOptions(args);
  if (!options.ok()) {
    std::cerr << "vcctl: " << basalt::MessageOf(options.status());
    return kExitUsage;
  }
  if (!options->help.empty()) {
    std::cout << options->help;
    return kExitOk;
  }
  // An interactive tool: no client-side throttling beyond the defaults of the binaries.
  absl::StatusOr<std::unique_ptr<basalt::client::Client>> client =
      basalt::client::Client::FromOptions(options->client);
  if (!client.ok()) {
    std::cerr << "vcctl: cannot configure the API client: " << basalt::MessageOf(client.status())
              << "\n";
    return kExitApiError;
  }
  return RunCommand(*options, **client, std::cout, std::cerr);
}
