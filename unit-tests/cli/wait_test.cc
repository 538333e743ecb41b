#include "cli/wait.h"

#include <set>

#include "catch2/catch.hpp"
#include "unit-tests/cli/builders.h"

namespace basalt::cli {
namespace {

using testing::EventBuilder;
using testing::JobBuilder;
using testing::PodBuilder;

TEST_CASE("ExitCodeForPhase: only final phases end the wait, each with its own code",
          "[cli][wait]") {
  CHECK(ExitCodeForPhase("Completed") == kExitOk);
  CHECK(ExitCodeForPhase("Failed") == kExitJobFailed);
  CHECK(ExitCodeForPhase("Aborted") == kExitJobAborted);
  CHECK(ExitCodeForPhase("Terminated") == kExitJobTerminated);
  for (const char* phase :
       {"", "Pending", "Running", "Restarting", "Completing", "Aborting", "Terminating"}) {
    CHECK_FALSE(ExitCodeForPhase(phase).has_value());
  }
  // The codes are distinct (CI scripts branch on them).
  std::set<int> codes = {kExitOk,         kExitJobFailed,     kExitUsage,
                         kExitJobAborted, kExitJobTerminated, kExitTimeout,
                         kExitApiError,   kExitJobDeleted};
  CHECK(codes.size() == 8);
}

TEST_CASE("JobWaiter: one line per phase change, retries counted, ends on Completed",
          "[cli][wait]") {
  JobWaiter w("train-uid");
  JobBuilder b("train");
  b.Task("worker", 2).MaxRetry(3);
  CHECK(w.Observe(b.Build()).empty());  // no phase yet: the controller has not seen it
  CHECK(w.Observe(b.Phase("Pending").Build()) ==
        std::vector<std::string>{"job default/train: Pending"});
  CHECK(w.Observe(b.Rv("2").Build()).empty());  // same phase, nothing new
  CHECK(w.Observe(b.Phase("Running").Build()) ==
        std::vector<std::string>{"job default/train: Running"});
  CHECK(w.Observe(b.Phase("Restarting").RetryCount(1).Build()) ==
        std::vector<std::string>{"job default/train: Restarting (retry 1 of 3)"});
  CHECK(w.Observe(b.Phase("Running").Build()) ==
        std::vector<std::string>{"job default/train: Running"});
  CHECK_FALSE(w.outcome().has_value());
  CHECK(w.Observe(b.Phase("Completed").Build()) ==
        std::vector<std::string>{"job default/train: Completed"});
  REQUIRE(w.outcome() == kExitOk);
  // Nothing after the end.
  CHECK(w.Observe(b.Phase("Running").Build()).empty());
  CHECK(w.outcome() == kExitOk);
}

TEST_CASE("JobWaiter: a reason or message change is printed, Failed ends with code 1",
          "[cli][wait]") {
  JobWaiter w;
  JobBuilder b("crash");
  b.Task("w", 1);
  w.Observe(b.Phase("Pending").Build());
  CHECK(
      w.Observe(b.Reason("InvalidJobSpec").Message("spec.tasks[0]: bad").Build()) ==
      std::vector<std::string>{
          R"(job default/crash: Pending: reason "InvalidJobSpec", message "spec.tasks[0]: bad")"});
  CHECK(w.Observe(b.Phase("Failed").Reason("").Message("").Build()) ==
        std::vector<std::string>{"job default/crash: Failed"});
  CHECK(w.outcome() == kExitJobFailed);
}

TEST_CASE("JobWaiter: Aborted, Terminated, deletion and replacement", "[cli][wait]") {
  JobWaiter aborted;
  aborted.Observe(JobBuilder("a").Phase("Aborted").Build());
  CHECK(aborted.outcome() == kExitJobAborted);
  JobWaiter terminated;
  terminated.Observe(JobBuilder("t").Phase("Terminated").Build());
  CHECK(terminated.outcome() == kExitJobTerminated);

  JobWaiter deleted("d-uid");
  deleted.Observe(JobBuilder("d").Phase("Running").Build());
  CHECK(deleted.ObserveDeleted() == std::vector<std::string>{"job default/d: deleted"});
  CHECK(deleted.outcome() == kExitJobDeleted);

  // Same name, another uid: the job we started is gone.
  JobWaiter replaced("r-uid");
  replaced.Observe(JobBuilder("r").Phase("Running").Build());
  CHECK(replaced.Observe(JobBuilder("r").Uid("other").Phase("Pending").Build()) ==
        std::vector<std::string>{"job default/r: deleted"});
  CHECK(replaced.outcome() == kExitJobDeleted);
}

TEST_CASE("FinalSummary: the state's reason, else the newest Warning event, and the failed pod",
          "[cli][wait]") {
  api::Job with_reason = JobBuilder("j")
                             .Phase("Failed")
                             .Reason("PodFailed")
                             .Message("boom")
                             .RetryCount(2)
                             .MaxRetry(2)
                             .Build();
  CHECK(
      FinalSummary(kExitJobFailed, &with_reason, {}) ==
      R"(vcctl: job default/j Failed after 2 of 2 retries: reason "PodFailed", message "boom" (exit code 1))");

  api::Job bare = JobBuilder("j").Phase("Failed").RetryCount(2).MaxRetry(2).Build();
  std::vector<api::Event> events = {EventBuilder("e1", "j")
                                        .Type("Warning")
                                        .Reason("FailedCreate")
                                        .Message("old")
                                        .Last("2026-05-01T10:00:00Z")
                                        .Build(),
                                    EventBuilder("e2", "j")
                                        .Type("Warning")
                                        .Reason("PodFailed")
                                        .Message("newest warning")
                                        .Last("2026-05-01T10:02:00Z")
                                        .Build(),
                                    EventBuilder("e3", "j")
                                        .Type("Normal")
                                        .Reason("ExecuteAction")
                                        .Message("later normal")
                                        .Last("2026-05-01T10:03:00Z")
                                        .Build()};
  std::vector<api::Pod> pods = {PodBuilder("j-w-1").Phase("Failed").Terminated(3, "Error").Build(),
                                PodBuilder("j-w-0").Phase("Running").Running(true).Build()};
  CHECK(FinalSummary(kExitJobFailed, &bare, events, pods) ==
        "vcctl: job default/j Failed after 2 of 2 retries: last Warning event PodFailed: newest "
        "warning; pod default/j-w-1 failed: container main exited with code 3 (Error) "
        "(exit code 1)");

  api::Job aborted = JobBuilder("j").Phase("Aborted").Build();
  CHECK(FinalSummary(kExitJobAborted, &aborted, {}) ==
        "vcctl: job default/j Aborted: no reason recorded (exit code 3)");
  api::Job done = JobBuilder("j").Phase("Completed").Build();
  CHECK(FinalSummary(kExitOk, &done, events) == "vcctl: job default/j Completed");
  CHECK(TimeoutSummary("default/j", "Running", "5s") ==
        "vcctl: timed out after 5s waiting for job default/j (phase Running) (exit code 5)");
}

}  // namespace
}  // namespace basalt::cli
