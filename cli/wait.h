#pragma once
// The CI mode of `vcctl job run --wait`: what is printed while a Job runs and how the process
// exits. JobWaiter is the state machine, fed with every version of the Job the API server
// shows (watch events, re-reads); the loop around it (commands.cc) only moves snapshots in and
// lines out, so the behaviour is unit tested on recorded sequences.
//
// Exit codes are part of the CLI's contract (docs/vcctl.md) and never change meaning.
//
// JobWaiter is not thread-safe (one per wait); the functions are pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/batch.h"
#include "common/api/core.h"

namespace basalt::cli {

enum ExitCode : int {
  kExitOk = 0,             // the command did what it says; with --wait: the Job Completed
  kExitJobFailed = 1,      // --wait: the Job ended Failed (e.g. maxRetry exhausted)
  kExitUsage = 2,          // bad command line: unknown command or flag, missing --name, bad file
  kExitJobAborted = 3,     // --wait: the Job ended Aborted (suspended, or a policy's AbortJob)
  kExitJobTerminated = 4,  // --wait: the Job ended Terminated (a TerminateJob policy/command)
  kExitTimeout = 5,        // --wait --timeout: the Job had not finished in time
  kExitApiError = 6,       // the API server refused or could not be reached (message printed)
  kExitJobDeleted = 7,     // --wait: the Job was deleted (or replaced) before it finished
};

// The exit code of a Job that ended in `phase` (Completed, Failed, Aborted, Terminated), or
// nullopt while it is still going (every other phase, including Pending and Restarting).
std::optional<ExitCode> ExitCodeForPhase(std::string_view phase);

class JobWaiter {
 public:
  // Waits for the Job with this uid (the one `run` created); a Job of the same name with
  // another uid is a replacement, reported as deleted. `uid` may be empty (any).
  explicit JobWaiter(std::string uid = {}) : uid_(std::move(uid)) {}

  // Takes the next version of the Job; returns the lines to print (none when nothing a user
  // follows changed): one per phase change, with the reason and message of status.state, the
  // retry count when it grew, e.g.
  //   job default/train: Running
  //   job default/train: Restarting (retry 1 of 3)
  //   job default/train: Failed: reason "PodFailed", message "..."
  std::vector<std::string> Observe(const api::Job& job);
  // The Job was deleted.
  std::vector<std::string> ObserveDeleted();

  // Set once the Job reached a final phase or was deleted.
  std::optional<ExitCode> outcome() const { return outcome_; }
  const std::string& phase() const { return phase_; }

 private:
  std::string uid_;
  std::string key_;
  std::string phase_;
  std::string reason_;
  std::string message_;
  int32_t retry_count_ = 0;
  std::optional<ExitCode> outcome_;
};

// The closing line of a wait that ended with `code` for `job` (nullopt: deleted before it was
// ever seen), naming the outcome and why: the Job's state reason and message, else the most
// recent Warning event of the Job (the controllers explain failures there), else the latest
// event; for Failed also the retries against maxRetry. `events` in any order.
//   vcctl: job default/crasher Failed after 2 of 2 retries: PodFailed: ... (exit code 1)
// `pods` (the Job's, any order) add the first failed pod and why it failed.
std::string FinalSummary(ExitCode code, const api::Job* job, const std::vector<api::Event>& events,
                         const std::vector<api::Pod>& pods = {});

// Why a failed pod failed: "pod ns/p failed: container main exited with code 3 (Error)"; ""
// when the pod did not fail.
std::string DescribeFailedPod(const api::Pod& pod);

// The closing line of a wait that timed out.
std::string TimeoutSummary(std::string_view key, std::string_view phase, std::string_view timeout);

}  // namespace basalt::cli
