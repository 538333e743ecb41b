#pragma once
// Runs one parsed vcctl command (options.h) against the API server and prints its result, as
// Volcano's vcctl does: tables to `out`, errors to `err` (the server's or webhook's message
// verbatim, see api.h), and returns the process exit code (wait.h ExitCode).
//
// `job run --wait` watches the Job it created until a final phase (JobWaiter), optionally
// following the logs of the first pod of one task on a second thread (pods/log with follow;
// a pod whose node serves no logs, as KWOK's, is reported once and waiting goes on).
//
// Runs on the calling thread (plus the log follower while waiting). `client` must outlive the
// call.

#include <ostream>

#include "cli/options.h"
#include "common/client/client.h"

namespace basalt::cli {

int RunCommand(const Options& options, client::Client& client, std::ostream& out,
               std::ostream& err);

}  // namespace basalt::cli
