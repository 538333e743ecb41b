#include "scheduler/framework/cycle_report.h"

#include <catch2/catch.hpp>
#include <map>

#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

const CycleReport::Job* FindUnschedulable(const CycleReport& r, const std::string& name) {
  for (const auto& j : r.unschedulable_jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

TEST_CASE("CycleReport: timings, dispatched tasks, unschedulable and placed gangs, queues",
          "[sched][report]") {
  const SchedulerConfig config = DefaultSchedulerConfig();
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default").Weight(2));
  cluster.AddNode(MakeNode("n0").Allocatable("cpu", "16").Allocatable("nvidia.com/gpu", 4));
  // "a" (2 GPUs) fits; the gang "b" (3 of 3 GPUs) cannot once "a" holds two of the four.
  cluster.AddJob(MakeJob("ns", "a").MinAvailable(2).Created(1), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  cluster.AddJob(MakeJob("ns", "b").MinAvailable(3).Created(2), 3,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1));
  REQUIRE(cluster.RunCycle(config).ok());  // admits both; the "controller" creates their pods
  REQUIRE(cluster.RunCycle(config).ok());  // places "a"
  const CycleReport& r = cluster.last_report();

  REQUIRE(r.actions.size() == config.actions.size());
  for (size_t i = 0; i < config.actions.size(); ++i) CHECK(r.actions[i].name == config.actions[i]);
  size_t opens = 0;
  size_t closes = 0;
  for (const auto& p : r.plugins) (p.open ? opens : closes) += 1;
  CHECK(opens == closes);
  CHECK(opens > 0);
  CHECK(r.total >= r.actions.front().duration);

  CHECK(r.tasks_dispatched == 2);
  CHECK(r.task_latencies.size() == 2);
  REQUIRE(r.scheduled_jobs.size() == 1);
  CHECK(r.scheduled_jobs[0].name == "a");
  CHECK(r.scheduled_jobs[0].namespace_name == "ns");
  CHECK(r.scheduled_jobs[0].queue == "default");
  // Created at 1 s, placed by the cycle at 2 s (FakeCluster's clock: T(cycle number)).
  CHECK(r.scheduled_jobs[0].since_creation == std::chrono::seconds(1));
  CHECK(r.scheduled_jobs[0].placed - r.scheduled_jobs[0].created == std::chrono::seconds(1));
  CHECK(r.scheduled_jobs[0].created != Timestamp{});

  const CycleReport::Job* b = FindUnschedulable(r, "b");
  REQUIRE(b != nullptr);
  CHECK(b->unschedulable_tasks == 3);
  CHECK(FindUnschedulable(r, "a") == nullptr);
  CHECK(r.evictions == 0);
  CHECK(r.preemption_attempts == 0);

  REQUIRE(r.queues.size() == 1);
  const CycleReport::Queue& q = r.queues[0];
  CHECK(q.name == "default");
  CHECK(q.weight == 2);
  CHECK(q.allocated.Get("nvidia.com/gpu") == 2000);
  CHECK(q.request.Get("nvidia.com/gpu") == 5000);
  CHECK_FALSE(q.capability.has_value());
  // proportion reported its view of the queue.
  REQUIRE(q.share.deserved.has_value());
  CHECK(q.share.deserved->Get("nvidia.com/gpu") == 4000);
  REQUIRE(q.share.share.has_value());
  CHECK(*q.share.share == Approx(0.5));
  // drf reported each job's dominant share: "a" holds 2 of the 4 GPUs, "b" nothing.
  std::map<std::string, double> shares;
  for (const auto& j : r.job_shares) {
    CHECK(j.namespace_name == "ns");
    shares[j.name] = j.share;
  }
  REQUIRE(shares.size() == 2);
  CHECK(shares["a"] == Approx(0.5));
  CHECK(shares["b"] == 0);

  // Next cycle nothing new is placed and "b" is still unschedulable.
  REQUIRE(cluster.RunCycle(config).ok());
  CHECK(cluster.last_report().tasks_dispatched == 0);
  CHECK(cluster.last_report().scheduled_jobs.empty());
  CHECK(FindUnschedulable(cluster.last_report(), "b") != nullptr);
}

TEST_CASE("CycleReport: the preempt action's attempts and victims are counted", "[sched][report]") {
  SchedulerConfig config = DefaultSchedulerConfig();
  config.actions.push_back("preempt");
  for (auto& tier : config.tiers) {
    for (auto& p : tier.plugins) {
      if (p.name == "gang" || p.name == "drf") p.flags["enablePreemptable"] = false;
    }
  }
  FakeCluster cluster;
  cluster.AddQueue(MakeQueue("default"));
  cluster.AddNode(MakeNode("n0").Allocatable("cpu", "16").Allocatable("nvidia.com/gpu", 2));
  cluster.AddJob(MakeJob("ns", "low").Priority(1).MinAvailable(1).Created(1), 2,
                 MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(1));
  for (int i = 0; i < 3; ++i) REQUIRE(cluster.RunCycle(config).ok());
  cluster.AddJob(
      MakeJob("ns", "high").Priority(1000000).MinAvailable(1).Created(5), 1,
      MakeTask("tmpl").Request("cpu", "1").Request("nvidia.com/gpu", 1).Priority(1000000));
  int64_t attempts = 0;
  int64_t victims = 0;
  for (int i = 0; i < 3; ++i) {
    REQUIRE(cluster.RunCycle(config).ok());
    attempts += cluster.last_report().preemption_attempts;
    victims += cluster.last_report().evictions;
  }
  CHECK(attempts >= 1);
  CHECK(victims == cluster.evictions());
  CHECK(victims == 1);
}

}  // namespace
}  // namespace basalt::sched
