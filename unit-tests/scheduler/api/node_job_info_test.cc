#include <catch2/catch.hpp>

#include "scheduler/api/cluster_info.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeTask;
using testing::Res;

TEST_CASE("NodeInfo: accounting by task status", "[sched][node]") {
  NodeInfo node = MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 4).Build();
  TaskInfo running =
      MakeTask("r").Request("nvidia.com/gpu", 1).Node("n1").Status(TaskStatus::kRunning);
  TaskInfo releasing =
      MakeTask("x").Request("nvidia.com/gpu", 1).Node("n1").Status(TaskStatus::kReleasing);
  TaskInfo pipelined =
      MakeTask("p").Request("nvidia.com/gpu", 2).Node("n1").Status(TaskStatus::kPipelined);
  REQUIRE(node.AddTask(&running).ok());
  REQUIRE(node.AddTask(&releasing).ok());
  REQUIRE(node.AddTask(&pipelined).ok());
  CHECK(node.idle().Get("nvidia.com/gpu") == 2000);
  CHECK(node.used().Get("nvidia.com/gpu") == 2000);
  CHECK(node.releasing().Get("nvidia.com/gpu") == 1000);
  CHECK(node.pipelined().Get("nvidia.com/gpu") == 2000);
  CHECK(node.FutureIdle().Get("nvidia.com/gpu") == 1000);
  CHECK(node.pod_count() == 2);
  CHECK(node.AddTask(&running).code() == absl::StatusCode::kAlreadyExists);

  REQUIRE(node.RemoveTask(releasing).ok());
  CHECK(node.idle().Get("nvidia.com/gpu") == 3000);
  CHECK(node.releasing().IsEmpty());
}

TEST_CASE("NodeInfo: an Allocated task must fit in Idle", "[sched][node]") {
  NodeInfo node = MakeNode("n1").Allocatable("nvidia.com/gpu", 1).Build();
  TaskInfo big =
      MakeTask("b").Request("nvidia.com/gpu", 2).Node("n1").Status(TaskStatus::kAllocated);
  CHECK(node.AddTask(&big).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(node.idle().Get("nvidia.com/gpu") == 1000);
  CHECK(node.tasks().empty());
}

TEST_CASE("JobInfo: status index, counts and allocated follow task status", "[sched][job]") {
  JobInfo job = MakeJob("ns", "pg").MinAvailable(3);
  TaskInfo* a = job.AddTask(MakeTask("a").Job("ns/pg").Request("cpu", "1"));
  TaskInfo* b =
      job.AddTask(MakeTask("b").Job("ns/pg").Request("cpu", "1").Status(TaskStatus::kRunning));
  job.AddTask(MakeTask("c").Job("ns/pg"));  // best effort
  CHECK(job.AddTask(MakeTask("a")) == nullptr);
  CHECK(job.ReadyTaskNum() == 1);
  CHECK(job.ValidTaskNum() == 3);
  CHECK(job.PendingBestEffortTaskNum() == 1);
  CHECK(job.allocated().milli_cpu() == 1000);
  job.UpdateTaskStatus(a, TaskStatus::kAllocated);
  CHECK(job.allocated().milli_cpu() == 2000);
  job.UpdateTaskStatus(b, TaskStatus::kSucceeded);
  CHECK(job.allocated().milli_cpu() == 1000);
  CHECK(job.TaskCount(TaskStatus::kSucceeded) == 1);
}

TEST_CASE("JobInfo: FitError histogram and origin reason", "[sched][job]") {
  JobInfo job = MakeJob("ns", "pg").MinAvailable(4);
  for (int i = 0; i < 4; ++i) {
    job.AddTask(MakeTask("pg-w-" + std::to_string(i)).Job("ns/pg").Request("nvidia.com/gpu", 1));
  }
  for (int i = 0; i < 3; ++i) {
    job.FindTask("uid-pg-w-" + std::to_string(i))->last_transaction =
        LastTransaction{TaskStatus::kAllocated, "n1"};
  }
  FitErrors fe;
  fe.SetNodeError("n1", {"Insufficient nvidia.com/gpu"});
  job.nodes_fit_errors["uid-pg-w-3"] = fe;
  CHECK(
      job.FitError() ==
      "pod group is not ready, 4 Pending, 4 minAvailable; Pending: 1 Unschedulable, 3 Schedulable. "
      "Origin reason is pg-w-3: 0/1 nodes are unavailable: 1 Insufficient nvidia.com/gpu.");
  const TaskInfo& t0 = *job.FindTask("uid-pg-w-0");
  CHECK(job.TaskReason(t0).reason == "Schedulable");
  CHECK(job.TaskReason(t0).message ==
        "Pod ns/pg-w-0 can possibly be assigned to n1, once minAvailable is satisfied");
  CHECK(job.TaskReason(*job.FindTask("uid-pg-w-3")).message ==
        "0/1 nodes are unavailable: 1 Insufficient nvidia.com/gpu.");
}

TEST_CASE("ClusterInfo: pods join their job or stay foreign, and account on their node",
          "[sched][cluster]") {
  ClusterInfo c;
  REQUIRE(c.AddNode(MakeNode("n1").Allocatable("cpu", "4")).ok());
  REQUIRE(c.AddJob(MakeJob("ns", "pg")).ok());
  REQUIRE(
      c.AddTask(
           MakeTask("a").Job("ns/pg").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning))
          .ok());
  REQUIRE(c.AddTask(MakeTask("other").Request("cpu", "2").Node("n1").Status(TaskStatus::kRunning))
              .ok());
  CHECK(c.AddTask(MakeTask("other")).code() == absl::StatusCode::kAlreadyExists);
  CHECK(c.FindJob("ns/pg")->tasks().size() == 1);
  CHECK(c.foreign_tasks().size() == 1);
  CHECK(c.FindNode("n1")->idle().milli_cpu() == 1000);
  ClusterInfo moved = std::move(c);
  CHECK(moved.FindNode("n1")->tasks().at("uid-a")->job_id == "ns/pg");
}

TEST_CASE("Task and selector helpers", "[sched][task]") {
  CHECK(PodNameIndex("job-worker-12") == 12);
  CHECK(PodNameIndex("job-12") == -1);
  std::map<std::string, std::string> labels{{"zone", "a"}, {"gen", "5"}};
  using Op = NodeSelectorRequirement::Operator;
  CHECK(NodeSelectorRequirement{"zone", Op::kIn, {"a", "b"}}.Matches(labels));
  CHECK_FALSE(NodeSelectorRequirement{"zone", Op::kNotIn, {"a"}}.Matches(labels));
  CHECK(NodeSelectorRequirement{"rack", Op::kNotIn, {"a"}}.Matches(labels));
  CHECK(NodeSelectorRequirement{"zone", Op::kExists, {}}.Matches(labels));
  CHECK(NodeSelectorRequirement{"rack", Op::kDoesNotExist, {}}.Matches(labels));
  CHECK(NodeSelectorRequirement{"gen", Op::kGt, {"4"}}.Matches(labels));
  CHECK_FALSE(NodeSelectorRequirement{"gen", Op::kLt, {"5"}}.Matches(labels));
  CHECK_FALSE(NodeSelectorRequirement{"zone", Op::kGt, {"1"}}.Matches(labels));
  CHECK_FALSE(NodeSelectorTerm{}.Matches("n1", labels));
}

}  // namespace
}  // namespace basalt::sched

namespace basalt::sched {
namespace {

TEST_CASE("ClusterInfo: Clone is deep and RemoveTask undoes AddTask", "[sched][cluster]") {
  using testing::MakeJob;
  using testing::MakeNode;
  using testing::MakeTask;
  ClusterInfo c;
  REQUIRE(c.AddNode(MakeNode("n1").Allocatable("cpu", "4")).ok());
  REQUIRE(c.AddJob(MakeJob("ns", "pg")).ok());
  REQUIRE(
      c.AddTask(
           MakeTask("a").Job("ns/pg").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning))
          .ok());
  REQUIRE(
      c.AddTask(MakeTask("f").Request("cpu", "2").Node("n1").Status(TaskStatus::kRunning)).ok());

  ClusterInfo copy = c.Clone();
  TaskInfo* copied = copy.FindJob("ns/pg")->FindTask("uid-a");
  CHECK(copy.FindNode("n1")->tasks().at("uid-a") == copied);
  CHECK(copy.FindNode("n1")->tasks().at("uid-f") == &copy.foreign_tasks().at("uid-f"));
  CHECK(copied != c.FindJob("ns/pg")->FindTask("uid-a"));
  copy.FindJob("ns/pg")->UpdateTaskStatus(copied, TaskStatus::kSucceeded);
  CHECK(c.FindJob("ns/pg")->FindTask("uid-a")->status == TaskStatus::kRunning);

  REQUIRE(c.RemoveTask("ns/pg", "uid-a").ok());
  REQUIRE(c.RemoveTask("", "uid-f").ok());
  CHECK(c.FindNode("n1")->idle().milli_cpu() == 4000);
  CHECK(c.FindNode("n1")->pod_count() == 0);
  CHECK(c.FindJob("ns/pg")->tasks().empty());
  CHECK(c.FindJob("ns/pg")->allocated().IsEmpty());
  CHECK(c.RemoveTask("ns/pg", "uid-a").code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace basalt::sched
