// Plugins observed through a Session: orderings, votes and victim selection of priority, drf,
// gang, conformance, overcommit and proportion as registered by NewInTreeRegistry().
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "scheduler/framework/session.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

std::unique_ptr<Session> Open(ClusterInfo c, std::string_view yaml) {
  auto config = ParseSchedulerConfig(yaml);
  REQUIRE(config.ok());
  auto ssn = Session::Open(std::move(c), *config, NewInTreeRegistry(),
                           SessionOptions{"s", {}, nullptr, nullptr});
  REQUIRE(ssn.ok());
  return *std::move(ssn);
}

std::vector<const TaskInfo*> TasksOf(Session& ssn, const std::string& job) {
  std::vector<const TaskInfo*> out;
  for (const auto& [uid, t] : ssn.FindJob(job)->tasks()) out.push_back(&t);
  return out;
}

TEST_CASE("priority: higher priority tasks and jobs first, preempts only lower priority",
          "[sched][priority]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  (void)c.AddJob(MakeJob("ns", "low").Priority(1));
  (void)c.AddJob(MakeJob("ns", "high").Priority(10));
  (void)c.AddTask(
      MakeTask("low-0").Job("ns/low").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning));
  (void)c.AddTask(MakeTask("high-0").Job("ns/high").Request("cpu", "1").Priority(5));
  (void)c.AddTask(MakeTask("high-1").Job("ns/high").Request("cpu", "1").Priority(7));
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n");
  const JobInfo& low = *ssn->FindJob("ns/low");
  const JobInfo& high = *ssn->FindJob("ns/high");
  CHECK(ssn->JobOrder(high, low));
  CHECK(ssn->TaskOrder(high.tasks().at("uid-high-1"), high.tasks().at("uid-high-0")));
  const TaskInfo& preemptor = high.tasks().at("uid-high-0");
  CHECK(ssn->Preemptable(preemptor, TasksOf(*ssn, "ns/low")).size() == 1);
  CHECK(ssn->Preemptable(low.tasks().at("uid-low-0"), TasksOf(*ssn, "ns/high")).empty());
  CHECK(ssn->JobStarving(high));
}

TEST_CASE("drf: the job with the lower dominant share goes first and shares follow allocation",
          "[sched][drf]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "10").Allocatable("nvidia.com/gpu", 4));
  (void)c.AddJob(MakeJob("ns", "a").Created(1));
  (void)c.AddJob(MakeJob("ns", "b").Created(2));
  (void)c.AddTask(MakeTask("a-0")
                      .Job("ns/a")
                      .Request("nvidia.com/gpu", 2)
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  (void)c.AddTask(
      MakeTask("b-0").Job("ns/b").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning));
  (void)c.AddTask(MakeTask("b-1").Job("ns/b").Request("cpu", "4"));
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n");
  JobInfo& a = *ssn->FindJob("ns/a");
  JobInfo& b = *ssn->FindJob("ns/b");
  CHECK(ssn->JobOrder(b, a));  // b: 0.1 < a: 0.5
  REQUIRE(ssn->DoAllocate(b.FindTask("uid-b-1"), ssn->FindNode("n1")).ok());
  CHECK(ssn->JobOrder(b, a) == false);  // b: 0.5, a: 0.5 -> creation time: a first
  CHECK(ssn->JobOrder(a, b));
}

TEST_CASE("gang: victims never break a gang below minAvailable", "[sched][gang]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  (void)c.AddJob(MakeJob("ns", "victim").MinAvailable(2));
  (void)c.AddJob(MakeJob("ns", "p"));
  for (int i = 0; i < 3; ++i) {
    (void)c.AddTask(MakeTask("victim-" + std::to_string(i))
                        .Job("ns/victim")
                        .Request("cpu", "1")
                        .Node("n1")
                        .Status(TaskStatus::kRunning));
  }
  (void)c.AddTask(MakeTask("p-0").Job("ns/p").Request("cpu", "1"));
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n");
  auto victims =
      ssn->Preemptable(ssn->FindJob("ns/p")->tasks().at("uid-p-0"), TasksOf(*ssn, "ns/victim"));
  CHECK(victims.size() == 1);  // 3 ready, minAvailable 2
  CHECK_FALSE(ssn->JobValid(*ssn->FindJob("ns/victim")).has_value());
}

TEST_CASE("gang: a job with fewer valid tasks than minAvailable is invalid", "[sched][gang]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddJob(MakeJob("ns", "pg").MinAvailable(3));
  (void)c.AddTask(MakeTask("pg-0").Job("ns/pg").Request("cpu", "1"));
  (void)c.AddTask(MakeTask("pg-1").Job("ns/pg").Request("cpu", "1").Status(TaskStatus::kFailed));
  (void)c.AddTask(MakeTask("pg-2").Job("ns/pg").Request("cpu", "1").Status(TaskStatus::kFailed));
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n");
  auto invalid = ssn->JobValid(*ssn->FindJob("ns/pg"));
  REQUIRE(invalid.has_value());
  CHECK(invalid->reason == "NotEnoughTasks");
  CHECK(invalid->message == "Not enough valid tasks for gang-scheduling, valid: 1, min: 3");
  CHECK_FALSE(invalid->awaiting_pods);  // its pods exist: two of them failed
}

TEST_CASE("gang: a job with fewer pods than minAvailable awaits them, whatever their number",
          "[sched][gang]") {
  std::vector<std::string> messages;
  for (int pods = 1; pods <= 2; ++pods) {
    ClusterInfo c;
    (void)c.AddQueue(MakeQueue("default"));
    (void)c.AddJob(MakeJob("ns", "pg").MinAvailable(3));
    for (int i = 0; i < pods; ++i) {
      (void)c.AddTask(MakeTask("pg-" + std::to_string(i)).Job("ns/pg").Request("cpu", "1"));
    }
    auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n");
    auto invalid = ssn->JobValid(*ssn->FindJob("ns/pg"));
    REQUIRE(invalid.has_value());
    CHECK(invalid->reason == "NotEnoughTasks");
    CHECK(invalid->awaiting_pods);
    messages.push_back(invalid->message);
  }
  CHECK(messages[0] == "Waiting for the gang's pods to be created: minAvailable 3");
  CHECK(messages[1] == messages[0]);
}

TEST_CASE("gang: a task with fewer pods than its minTaskMember awaits them", "[sched][gang]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddJob(MakeJob("ns", "pg").MinAvailable(3).MinTaskMember("ps", 1).MinTaskMember("w", 2));
  (void)c.AddTask(MakeTask("pg-ps-0").Job("ns/pg").Role("ps").Request("cpu", "1"));
  (void)c.AddTask(MakeTask("pg-w-0").Job("ns/pg").Role("w").Request("cpu", "1"));
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n");
  auto invalid = ssn->JobValid(*ssn->FindJob("ns/pg"));
  REQUIRE(invalid.has_value());
  CHECK(invalid->reason == "NotEnoughPodsOfTask");
  CHECK(invalid->message == "Waiting for the pods of task w to be created: minTaskMember 2");
  CHECK(invalid->awaiting_pods);
}

TEST_CASE("conformance: critical pods are never victims", "[sched][conformance]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  (void)c.AddJob(MakeJob("ns", "v"));
  (void)c.AddJob(MakeJob("kube-system", "sys"));
  (void)c.AddTask(
      MakeTask("v-0").Job("ns/v").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning));
  (void)c.AddTask(MakeTask("v-1")
                      .Job("ns/v")
                      .Request("cpu", "1")
                      .Node("n1")
                      .Status(TaskStatus::kRunning)
                      .PriorityClass("system-node-critical"));
  (void)c.AddTask(MakeTask("s-0")
                      .Namespace("kube-system")
                      .Job("kube-system/sys")
                      .Request("cpu", "1")
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: conformance\n");
  std::vector<const TaskInfo*> all = TasksOf(*ssn, "ns/v");
  for (const TaskInfo* t : TasksOf(*ssn, "kube-system/sys")) all.push_back(t);
  auto victims = ssn->Reclaimable(MakeTask("x").Build(), all);
  REQUIRE(victims.size() == 1);
  CHECK(victims[0]->name == "v-0");
}

TEST_CASE("overcommit: admits while inqueue + minResources <= 1.2 x total - used",
          "[sched][overcommit]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "10"));
  (void)c.AddJob(MakeJob("ns", "running").Phase(PodGroupPhase::kRunning));
  (void)c.AddTask(
      MakeTask("r").Job("ns/running").Request("cpu", "4").Node("n1").Status(TaskStatus::kRunning));
  (void)c.AddJob(MakeJob("ns", "fits").MinResources("cpu", "8").Phase(PodGroupPhase::kPending));
  (void)c.AddJob(MakeJob("ns", "too-big").MinResources("cpu", "9").Phase(PodGroupPhase::kPending));
  auto ssn = Open(std::move(c), "actions: enqueue\ntiers:\n- plugins:\n  - name: overcommit\n");
  // idle = 12 - 4 = 8.
  CHECK(ssn->JobEnqueueable(*ssn->FindJob("ns/fits")));
  CHECK_FALSE(ssn->JobEnqueueable(*ssn->FindJob("ns/too-big")));
  CHECK(ssn->FindJob("ns/too-big")->job_fit_errors ==
        "resource in cluster is overused: overused cpu");
  ssn->JobEnqueued(*ssn->FindJob("ns/fits"));
  CHECK_FALSE(ssn->JobEnqueueable(*ssn->FindJob("ns/fits")));
}

TEST_CASE("proportion: Allocatable and Overused follow the deserved share", "[sched][proportion]") {
  // Reference §5 A: q1 deserves 2.5 CPU, so it can place two 1-CPU tasks.
  ClusterInfo c;
  for (int i = 1; i <= 3; ++i)
    (void)c.AddNode(MakeNode("n" + std::to_string(i)).Allocatable("cpu", "4"));
  int w = 1;
  for (const auto& [q, cpus] :
       std::vector<std::pair<std::string, int>>{{"q1", 10}, {"q2", 2}, {"q3", 12}}) {
    (void)c.AddQueue(MakeQueue(q).Weight(w++));
    (void)c.AddJob(MakeJob("ns", q + "-job").Queue(q).MinAvailable(1));
    for (int i = 0; i < cpus; ++i) {
      (void)c.AddTask(
          MakeTask(q + "-job-t-" + std::to_string(i)).Job("ns/" + q + "-job").Request("cpu", "1"));
    }
  }
  auto ssn = Open(std::move(c), "actions: allocate\ntiers:\n- plugins:\n  - name: proportion\n");
  JobInfo& job = *ssn->FindJob("ns/q1-job");
  const QueueInfo& q1 = *ssn->FindQueue("q1");
  int placed = 0;
  for (int i = 0; i < 10; ++i) {
    TaskInfo* t = job.FindTask("uid-q1-job-t-" + std::to_string(i));
    if (!ssn->Allocatable(q1, *t)) break;
    REQUIRE(ssn->DoAllocate(t, ssn->FindNode("n1")).ok());
    ++placed;
  }
  CHECK(placed == 2);
  CHECK_FALSE(ssn->Overused(q1));                     // 2 < 2.5
  CHECK(ssn->QueueOrder(*ssn->FindQueue("q3"), q1));  // q3 share 0 < q1 share 0.8
}

}  // namespace
}  // namespace basalt::sched
