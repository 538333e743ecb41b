// nodegroup with the allocate action: the task annotation, the queue's required and preferred
// node groups, and the explanation of an impossible group.
#include "scheduler/plugins/nodegroup/nodegroup.h"

#include <catch2/catch.hpp>

#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/conf.h"
#include "unit-tests/scheduler/testing/cycle.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

// Volcano's default tiers (overcommit included: it only gates enqueue) and nodegroup.
const std::string kConfig =
    testing::SchedConfYaml("enqueue, allocate, backfill", testing::PluginEntry("nodegroup"));

struct Cycle : testing::OneCycle {
  Cycle() : OneCycle(kConfig) {}
};

// n0 n1 in group a, n2 n3 in group b, n4 in none.
ClusterInfo Groups(QueueInfo queue) {
  ClusterInfo c;
  (void)c.AddQueue(std::move(queue));
  for (int i = 0; i < 5; ++i) {
    MakeNode node =
        MakeNode(fmt::format("n{}", i)).Allocatable("cpu", "8").Allocatable("memory", "8Gi");
    if (i < 4) node.Label("volcano.sh/nodegroup-name", i < 2 ? "a" : "b");
    (void)c.AddNode(node);
  }
  return c;
}

void AddPod(ClusterInfo& c, const std::string& name, const std::string& group) {
  (void)c.AddJob(MakeJob("ns", name).MinAvailable(1));
  TaskInfo t =
      MakeTask(fmt::format("{}-0", name)).Job(fmt::format("ns/{}", name)).Request("cpu", "1");
  t.node_group = group;
  (void)c.AddTask(std::move(t));
}

TEST_CASE("nodegroup: the task annotation keeps a pod in its group, an impossible one says so",
          "[sched][plugins][nodegroup]") {
  ClusterInfo c = Groups(MakeQueue("default"));
  AddPod(c, "inb", "b");
  AddPod(c, "nowhere", "zzz");
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c)).ok());
  const auto bound = cycle.binder.Bound();
  REQUIRE(bound.count("uid-inb-0") == 1);
  CHECK((bound.at("uid-inb-0") == "n2" || bound.at("uid-inb-0") == "n3"));
  CHECK(bound.count("uid-nowhere-0") == 0);
  const PodGroupStatusUpdate* pg = cycle.sink.LastPodGroup("ns/nowhere");
  REQUIRE(pg != nullptr);
  const PodGroupCondition* cond = pg->status.FindCondition("Unschedulable");
  REQUIRE(cond != nullptr);
  CHECK_THAT(cond->message, Catch::Contains("5 node(s) not in node group zzz (annotation "
                                            "scheduling.volcano.sh/node-group)"));
}

TEST_CASE("nodegroup: queue affinity, required and preferred", "[sched][plugins][nodegroup]") {
  {
    QueueInfo q = MakeQueue("default");
    q.node_group_affinity.required = {"a"};
    ClusterInfo c = Groups(q);
    AddPod(c, "p", "");
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    const auto bound = cycle.binder.Bound();
    REQUIRE(bound.count("uid-p-0") == 1);
    CHECK((bound.at("uid-p-0") == "n0" || bound.at("uid-p-0") == "n1"));
  }
  {
    QueueInfo q = MakeQueue("default");
    q.node_group_anti_affinity.required = {"a", "b"};
    ClusterInfo c = Groups(q);
    AddPod(c, "p", "");
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    CHECK(cycle.binder.Bound().at("uid-p-0") == "n4");
  }
  {
    QueueInfo q = MakeQueue("default");
    q.node_group_affinity.preferred = {"b"};
    ClusterInfo c = Groups(q);
    AddPod(c, "p", "");
    Cycle cycle;
    REQUIRE(cycle.Run(std::move(c)).ok());
    const std::string node = cycle.binder.Bound().at("uid-p-0");
    CHECK((node == "n2" || node == "n3"));
  }
}

}  // namespace
}  // namespace basalt::sched
