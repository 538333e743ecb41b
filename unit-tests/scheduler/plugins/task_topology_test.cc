// task-topology in whole cycles on a FakeCluster (real actions and plugins): affinity keeps a
// ps and its workers on one node where nodeorder alone spreads them, anti-affinity spreads
// workers where binpack alone packs them, the task order decides which pod gets the last free
// node, a malformed annotation is explained on the PodGroup, and without the plugin (or without
// annotations) nothing changes.
#include "scheduler/plugins/task_topology/task_topology.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "common/api/task_topology.h"
#include "fmt/format.h"
#include "scheduler/conf/config.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::FakeCluster;
using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

constexpr std::string_view kJob = "ns/tf";

// `scoring` is nodeorder (spreads) or binpack (packs); `topology` the task-topology entry, if any.
SchedulerConfig Config(std::string_view scoring, std::string_view topology) {
  auto config = ParseSchedulerConfig(fmt::format(R"(
actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: {}
{})",
                                                 scoring, topology));
  REQUIRE(config.ok());
  return *config;
}

constexpr std::string_view kTopology = R"(  - name: task-topology
    arguments:
      task-topology.weight: 10)";

// `nodes` nodes of 4 CPUs; job ns/tf (admitted) with `ps` ps pods and `workers` worker pods of
// `cpu` CPUs each, minAvailable = all of them, and the given annotations.
FakeCluster Cluster(int nodes, int ps, int workers, std::map<std::string, std::string> annotations,
                    std::string_view cpu = "1") {
  FakeCluster c;
  c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < nodes; ++i) {
    c.AddNode(
        MakeNode(fmt::format("n{}", i)).Allocatable("cpu", "4").Allocatable("memory", "16Gi"));
  }
  JobInfo job = MakeJob("ns", "tf").MinAvailable(ps + workers).Phase(PodGroupPhase::kInqueue);
  job.task_topology_annotations = std::move(annotations);
  c.AddJob(std::move(job), 0, MakeTask("unused"));
  auto add = [&](std::string_view role, int n, int created) {
    for (int i = 0; i < n; ++i) {
      c.AddPodToJob(std::string(kJob), MakeTask(fmt::format("tf-{}-{}", role, i))
                                           .Role(std::string(role))
                                           .Request("cpu", cpu)
                                           .Created(created));
    }
  };
  add("ps", ps, 1);
  add("worker", workers, 2);
  return c;
}

// pod name -> node of the job's Running pods.
std::map<std::string, std::string> Placement(const FakeCluster& c) {
  std::map<std::string, std::string> out;
  for (const auto& p : c.job(std::string(kJob)).pods) {
    if (p.status == TaskStatus::kRunning) out[p.name] = p.node_name;
  }
  return out;
}

std::set<std::string> Nodes(const std::map<std::string, std::string>& placement) {
  std::set<std::string> out;
  for (const auto& [pod, node] : placement) out.insert(node);
  return out;
}

std::map<std::string, std::string> Affinity(std::string v) {
  return {{std::string(api::kTaskTopologyAffinityKey), std::move(v)}};
}
std::map<std::string, std::string> AntiAffinity(std::string v) {
  return {{std::string(api::kTaskTopologyAntiAffinityKey), std::move(v)}};
}

TEST_CASE("task-topology: affinity puts a ps and its workers on one node when they fit",
          "[sched][plugins][task_topology]") {
  FakeCluster without = Cluster(4, 1, 3, Affinity("ps,worker"));
  REQUIRE(without.RunCycle(Config("nodeorder", "")).ok());
  REQUIRE(Placement(without).size() == 4);
  CHECK(Nodes(Placement(without)).size() > 1);  // nodeorder spreads them

  FakeCluster with = Cluster(4, 1, 3, Affinity("ps,worker"));
  REQUIRE(with.RunCycle(Config("nodeorder", kTopology)).ok());
  REQUIRE(Placement(with).size() == 4);
  CHECK(Nodes(Placement(with)).size() == 1);
}

TEST_CASE("task-topology: a bucket too big for one node fills one node before the next",
          "[sched][plugins][task_topology]") {
  // 1 ps + 7 workers of 1 CPU on 4-CPU nodes: two full nodes, not four half-full ones.
  FakeCluster with = Cluster(4, 1, 7, Affinity("ps,worker"));
  REQUIRE(with.RunCycle(Config("nodeorder", kTopology)).ok());
  auto placement = Placement(with);
  REQUIRE(placement.size() == 8);
  CHECK(Nodes(placement).size() == 2);
}

TEST_CASE("task-topology: workers join the node their ps already runs on",
          "[sched][plugins][task_topology]") {
  FakeCluster c = Cluster(4, 0, 3, Affinity("ps,worker"));
  c.AddPodToJob(
      std::string(kJob),
      MakeTask("tf-ps-0").Role("ps").Request("cpu", "1").Node("n2").Status(TaskStatus::kRunning));
  c.SetMinAvailable(std::string(kJob), 4);
  REQUIRE(c.RunCycle(Config("nodeorder", kTopology)).ok());
  auto placement = Placement(c);
  REQUIRE(placement.size() == 4);
  CHECK(Nodes(placement) == std::set<std::string>{"n2"});
}

TEST_CASE("task-topology: under node sampling workers still find the node their ps runs on",
          "[sched][plugins][task_topology]") {
  // 150 nodes: the allocate action's predicate pass looks at a sample of 100 from a rotating
  // start (0 in a fresh session). The ps runs on n99, the last node in name order, outside the
  // first worker's sample: the plugin's preferred nodes bring it in.
  FakeCluster c = Cluster(150, 0, 3, Affinity("ps,worker"));
  c.AddPodToJob(
      std::string(kJob),
      MakeTask("tf-ps-0").Role("ps").Request("cpu", "1").Node("n99").Status(TaskStatus::kRunning));
  c.SetMinAvailable(std::string(kJob), 4);
  REQUIRE(c.RunCycle(Config("nodeorder", kTopology)).ok());
  auto placement = Placement(c);
  REQUIRE(placement.size() == 4);
  CHECK(Nodes(placement) == std::set<std::string>{"n99"});
}

TEST_CASE("task-topology: anti-affinity spreads workers that binpack alone packs",
          "[sched][plugins][task_topology]") {
  FakeCluster without = Cluster(4, 0, 4, AntiAffinity("worker"));
  REQUIRE(without.RunCycle(Config("binpack", "")).ok());
  REQUIRE(Placement(without).size() == 4);
  CHECK(Nodes(Placement(without)).size() == 1);

  FakeCluster with = Cluster(4, 0, 4, AntiAffinity("worker"));
  REQUIRE(with.RunCycle(Config("binpack", kTopology)).ok());
  REQUIRE(Placement(with).size() == 4);
  CHECK(Nodes(Placement(with)).size() == 4);
}

TEST_CASE("task-topology: with workers apart and ps near them, the ps shares a worker's node",
          "[sched][plugins][task_topology]") {
  auto annotations = Affinity("ps,worker");
  annotations[std::string(api::kTaskTopologyAntiAffinityKey)] = "worker";
  FakeCluster c = Cluster(4, 1, 3, annotations);
  REQUIRE(c.RunCycle(Config("nodeorder", kTopology)).ok());
  auto placement = Placement(c);
  REQUIRE(placement.size() == 4);
  std::set<std::string> worker_nodes;
  for (int i = 0; i < 3; ++i) worker_nodes.insert(placement.at(fmt::format("tf-worker-{}", i)));
  CHECK(worker_nodes.size() == 3);
  CHECK(worker_nodes.count(placement.at("tf-ps-0")) == 1);
}

TEST_CASE("task-topology: the task order decides which task gets the only free node",
          "[sched][plugins][task_topology]") {
  // One node with room for one 4-CPU pod; the job needs one of its two pods.
  auto run = [](std::map<std::string, std::string> annotations, std::string_view topology) {
    FakeCluster c = Cluster(1, 1, 1, std::move(annotations), "4");
    c.SetMinAvailable(std::string(kJob), 1);
    REQUIRE(c.RunCycle(Config("nodeorder", topology)).ok());
    auto placement = Placement(c);
    REQUIRE(placement.size() == 1);
    return placement.begin()->first;
  };
  const std::map<std::string, std::string> order = {
      {std::string(api::kTaskTopologyTaskOrderKey), "worker,ps"}};
  CHECK(run(order, "") == "tf-ps-0");  // without the plugin: the older pod first
  CHECK(run(order, kTopology) == "tf-worker-0");
  CHECK(run({{std::string(api::kTaskTopologyTaskOrderKey), "ps,worker"}}, kTopology) == "tf-ps-0");
}

TEST_CASE("task-topology: without the plugin, or without annotations, placement is unchanged",
          "[sched][plugins][task_topology]") {
  FakeCluster plain = Cluster(4, 1, 3, {});
  REQUIRE(plain.RunCycle(Config("nodeorder", "")).ok());

  FakeCluster annotated_plugin_off = Cluster(4, 1, 3, Affinity("ps,worker"));
  REQUIRE(annotated_plugin_off.RunCycle(Config("nodeorder", "")).ok());
  CHECK(Placement(annotated_plugin_off) == Placement(plain));

  FakeCluster plugin_on_no_annotations = Cluster(4, 1, 3, {});
  REQUIRE(plugin_on_no_annotations.RunCycle(Config("nodeorder", kTopology)).ok());
  CHECK(Placement(plugin_on_no_annotations) == Placement(plain));
  CHECK(plugin_on_no_annotations.last_sink().events.size() == plain.last_sink().events.size());
}

TEST_CASE("task-topology: a malformed annotation on a PodGroup is explained and ignored",
          "[sched][plugins][task_topology]") {
  FakeCluster plain = Cluster(4, 1, 3, {});
  REQUIRE(plain.RunCycle(Config("nodeorder", "")).ok());

  FakeCluster c = Cluster(4, 1, 3, Affinity("ps,wroker"));
  REQUIRE(c.RunCycle(Config("nodeorder", kTopology)).ok());
  CHECK(Placement(c) == Placement(plain));  // scheduled as without a task topology
  const std::string why =
      "volcano.sh/task-topology-affinity: task \"wroker\" is not a task of the job (its tasks: "
      "ps, worker); the job is scheduled without its task topology";
  const auto& status = c.job(std::string(kJob)).spec.podgroup_status;
  const PodGroupCondition* cond = status.FindCondition(kConditionTaskTopology);
  REQUIRE(cond != nullptr);
  CHECK(cond->status == "False");
  CHECK(cond->reason == kReasonInvalidTaskTopology);
  CHECK(cond->message == why);
  int warnings = 0;
  for (const auto& e : c.last_sink().events) {
    if (e.reason == "InvalidTaskTopology") {
      ++warnings;
      CHECK(e.type == "Warning");
      CHECK(e.name == "tf");
      CHECK(e.message == why);
    }
  }
  CHECK(warnings == 1);
}

TEST_CASE("task-topology: a negative weight is refused", "[sched][plugins][task_topology]") {
  Arguments negative(
      std::map<std::string, std::string, std::less<>>{{"task-topology.weight", "-1"}});
  CHECK(!NewTaskTopologyPlugin(negative).ok());
  Arguments word(
      std::map<std::string, std::string, std::less<>>{{"task-topology.weight", "heavy"}});
  CHECK(!NewTaskTopologyPlugin(word).ok());
  CHECK(NewTaskTopologyPlugin(Arguments()).ok());
}

TEST_CASE("task-topology: ParseTaskTopology applies the annotation rules",
          "[sched][plugins][task_topology]") {
  const std::vector<std::string> tasks = {"ps", "worker", "chief"};
  auto errors = [&](std::optional<std::string_view> aff, std::optional<std::string_view> anti,
                    std::optional<std::string_view> order) {
    std::vector<std::string> out;
    auto parsed = api::ParseTaskTopology(aff, anti, order, tasks);
    REQUIRE(parsed.has_value());
    for (const auto& e : parsed->errors) out.push_back(e.ToString());
    return out;
  };
  CHECK(!api::ParseTaskTopology(std::nullopt, std::nullopt, std::nullopt, tasks).has_value());
  // Volcano's user-guide example, with spaces and an empty entry.
  auto ok =
      api::ParseTaskTopology("ps, worker;ps,chief;", "ps;worker,,chief", "ps,worker,chief", tasks);
  REQUIRE(ok.has_value());
  CHECK(ok->errors.empty());
  CHECK(ok->topology.affinity ==
        std::vector<std::vector<std::string>>{{"ps", "worker"}, {"ps", "chief"}});
  CHECK(ok->topology.anti_affinity ==
        std::vector<std::vector<std::string>>{{"ps"}, {"worker", "chief"}});
  CHECK(errors("ps,ps", std::nullopt, std::nullopt) ==
        std::vector<std::string>{"volcano.sh/task-topology-affinity: task \"ps\" appears twice "
                                 "in the group \"ps,ps\""});
  CHECK(errors(std::nullopt, std::nullopt, "ps,evaluator") ==
        std::vector<std::string>{"volcano.sh/task-topology-task-order: task \"evaluator\" is not "
                                 "a task of the job (its tasks: ps, worker, chief)"});
  CHECK(errors("ps,worker", "worker,ps", std::nullopt) ==
        std::vector<std::string>{"volcano.sh/task-topology-anti-affinity: tasks \"ps\" and "
                                 "\"worker\" share a group here and in "
                                 "volcano.sh/task-topology-affinity: they cannot both share a "
                                 "node and avoid each other"});
  CHECK(errors("worker", "worker", std::nullopt).size() == 1);
  // A PodGroup whose pods name no task (no volcano.sh/task-spec).
  auto unnamed = api::ParseTaskTopology("ps", std::nullopt, std::nullopt, {});
  REQUIRE(unnamed.has_value());
  REQUIRE(unnamed->errors.size() == 1);
  CHECK(unnamed->errors[0].ToString() ==
        "volcano.sh/task-topology-affinity: task \"ps\" is not a task of the job (none of its "
        "pods names a task in volcano.sh/task-spec)");
}

}  // namespace
}  // namespace basalt::sched
