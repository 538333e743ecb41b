#include "scheduler/actions/util.h"

#include <catch2/catch.hpp>

#include "fmt/format.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

// `n` nodes "n000", "n001", ...; every third one (n000, n003, ...) is too small for the task.
ClusterInfo ManyNodes(int n) {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < n; ++i) {
    (void)c.AddNode(MakeNode(fmt::format("n{:03}", i)).Allocatable("cpu", i % 3 == 0 ? "1" : "8"));
  }
  (void)c.AddJob(MakeJob("ns", "pg").MinAvailable(1));
  (void)c.AddTask(MakeTask("t").Job("ns/pg").Request("cpu", "2"));
  return c;
}

std::unique_ptr<Session> Open(ClusterInfo c, NodeSampler* sampler) {
  static const PluginRegistry plugins = NewInTreeRegistry();
  auto ssn = Session::Open(std::move(c), DefaultSchedulerConfig(), plugins,
                           SessionOptions{"s1", {}, nullptr, nullptr, sampler});
  REQUIRE(ssn.ok());
  return *std::move(ssn);
}

TEST_CASE("PredicateSampledNodes: small clusters check every node", "[sched][sampling]") {
  NodeSampler sampler;
  auto ssn = Open(ManyNodes(30), &sampler);
  const TaskInfo* t = ssn->FindJob("ns/pg")->FindTask("uid-t");
  FitErrors errors;
  std::vector<NodeInfo*> feasible = PredicateSampledNodes(*ssn, *t, &errors);
  CHECK(feasible.size() == 20);
  CHECK(errors.nodes().size() == 10);
  CHECK(feasible.front()->name() == "n001");
  CHECK(sampler.Start(30) == 0);  // a full pass leaves the start in place
}

TEST_CASE("PredicateSampledNodes: large clusters stop at the sample and rotate the start",
          "[sched][sampling]") {
  // 300 nodes, defaults: adaptive 50 - 300/125 = 48% -> 144 feasible nodes wanted.
  NodeSampler sampler;
  auto ssn = Open(ManyNodes(300), &sampler);
  const TaskInfo* t = ssn->FindJob("ns/pg")->FindTask("uid-t");

  FitErrors errors;
  std::vector<NodeInfo*> first = PredicateSampledNodes(*ssn, *t, &errors);
  REQUIRE(first.size() == 144);
  // 144 feasible nodes are found among the first 216 nodes (2 of every 3 fit).
  CHECK(errors.nodes().size() == 72);
  CHECK(first.front()->name() == "n001");
  CHECK(first.back()->name() == "n215");
  CHECK(std::is_sorted(first.begin(), first.end(),
                       [](const NodeInfo* a, const NodeInfo* b) { return a->name() < b->name(); }));
  CHECK(sampler.Start(300) == 216);

  // The next pass starts at n216 and wraps around; its result is still in name order.
  std::vector<NodeInfo*> second = PredicateSampledNodes(*ssn, *t, nullptr);
  REQUIRE(second.size() == 144);
  CHECK(second.front()->name() == "n001");
  CHECK(second.back()->name() == "n299");
  CHECK(sampler.Start(300) == 132);  // (216 + 216) % 300

  // --percentage-nodes-to-find 100 checks every node.
  NodeSampler all(NodeSamplingOptions{100, 100, 5});
  auto ssn2 = Open(ManyNodes(300), &all);
  CHECK(PredicateSampledNodes(*ssn2, *ssn2->FindJob("ns/pg")->FindTask("uid-t"), nullptr).size() ==
        200);
}

}  // namespace
}  // namespace basalt::sched
