#include "scheduler/plugins/gang/gang.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeTask;

JobInfo Gang(std::vector<TaskStatus> statuses, int32_t min_available) {
  JobInfo job = MakeJob("ns", "pg").MinAvailable(min_available);
  int i = 0;
  for (TaskStatus s : statuses) {
    job.AddTask(MakeTask("pg-t-" + std::to_string(i++)).Job("ns/pg").Request("cpu", "1").Status(s));
  }
  return job;
}

TEST_CASE("gang: ready counts Allocated, Binding, Bound, Running and Succeeded", "[sched][gang]") {
  using S = TaskStatus;
  CHECK(GangJobReady(Gang({S::kAllocated, S::kBinding, S::kBound, S::kRunning}, 4)));
  CHECK(GangJobReady(Gang({S::kSucceeded, S::kRunning, S::kPending}, 2)));
  CHECK_FALSE(GangJobReady(Gang({S::kAllocated, S::kAllocated, S::kAllocated, S::kPending}, 4)));
  CHECK_FALSE(GangJobReady(Gang({S::kAllocated, S::kPipelined}, 2)));
}

TEST_CASE("gang: pipelined adds Pipelined tasks, starving below minAvailable", "[sched][gang]") {
  using S = TaskStatus;
  JobInfo job = Gang({S::kAllocated, S::kPipelined, S::kPending}, 2);
  CHECK_FALSE(GangJobReady(job));
  CHECK(GangJobPipelined(job));
  CHECK_FALSE(GangJobStarving(job));
  CHECK(GangJobStarving(Gang({S::kAllocated, S::kPending, S::kPending}, 2)));
}

TEST_CASE("gang: a pending best-effort task counts towards readiness", "[sched][gang]") {
  JobInfo job = MakeJob("ns", "pg").MinAvailable(2);
  job.AddTask(MakeTask("a").Job("ns/pg").Request("cpu", "1").Status(TaskStatus::kRunning));
  job.AddTask(MakeTask("b").Job("ns/pg"));
  CHECK(GangJobReady(job));
}

TEST_CASE("gang: per-role minTaskMember must be met", "[sched][gang]") {
  JobInfo job =
      MakeJob("ns", "pg").MinAvailable(3).MinTaskMember("ps", 1).MinTaskMember("worker", 2);
  job.AddTask(
      MakeTask("w0").Job("ns/pg").Role("worker").Request("cpu", "1").Status(TaskStatus::kRunning));
  job.AddTask(
      MakeTask("w1").Job("ns/pg").Role("worker").Request("cpu", "1").Status(TaskStatus::kRunning));
  job.AddTask(
      MakeTask("w2").Job("ns/pg").Role("worker").Request("cpu", "1").Status(TaskStatus::kRunning));
  TaskInfo* ps = job.AddTask(MakeTask("ps").Job("ns/pg").Role("ps").Request("cpu", "1"));
  CHECK_FALSE(GangJobReady(job));  // 3 ready but no ps
  job.UpdateTaskStatus(ps, TaskStatus::kAllocated);
  CHECK(GangJobReady(job));
}

TEST_CASE("gang: the unschedulable message never counts fewer than one missing task",
          "[sched][gang]") {
  // Four workers running, minAvailable 3, but the ps role's minTaskMember 1 is unmet: the gang
  // is not ready with more tasks ready than minAvailable (Volcano's formula would print -1).
  JobInfo job = MakeJob("ns", "pg").MinAvailable(3).MinTaskMember("ps", 1);
  for (int i = 0; i < 4; ++i) {
    job.AddTask(MakeTask("w" + std::to_string(i))
                    .Job("ns/pg")
                    .Role("worker")
                    .Request("cpu", "1")
                    .Status(TaskStatus::kRunning));
  }
  job.AddTask(MakeTask("ps").Job("ns/pg").Role("ps").Request("cpu", "1"));
  REQUIRE_FALSE(GangJobReady(job));
  CHECK(GangUnschedulableMessage(job).rfind("1/5 tasks in gang unschedulable: ", 0) == 0);
  // Below minAvailable the count is minAvailable less the ready tasks, as Volcano prints it.
  JobInfo short_gang = Gang({TaskStatus::kRunning, TaskStatus::kPending, TaskStatus::kPending}, 3);
  CHECK(GangUnschedulableMessage(short_gang).rfind("2/3 tasks in gang unschedulable: ", 0) == 0);
}

}  // namespace
}  // namespace basalt::sched
