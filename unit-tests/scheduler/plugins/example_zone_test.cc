// example_zone (docs/plugins.md's worked example) in a whole cycle with the allocate action:
// a job's tasks stay in the zone of its first placed task, where nodeorder alone spreads them
// over both zones; bad arguments are refused.
#include "scheduler/plugins/example_zone/example_zone.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/conf/config.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;
using testing::RecordingBinder;
using testing::RecordingStatusSink;

// nodeorder's least-requested score spreads tasks over empty nodes; example_zone, when
// configured, outweighs it.
std::string Config(std::string_view zone_plugin) {
  return fmt::format(R"(
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
{})",
                     zone_plugin);
}

// n0 n2 n4 in zone a, n1 n3 n5 in zone b (alternating, so node order alone mixes zones), 2 CPUs
// each; one job of 6 one-CPU tasks.
ClusterInfo TwoZones() {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  for (int i = 0; i < 6; ++i) {
    (void)c.AddNode(MakeNode(fmt::format("n{}", i))
                        .Allocatable("cpu", "2")
                        .Allocatable("memory", "8Gi")
                        .Label(std::string(kDefaultZoneLabel), i % 2 == 0 ? "a" : "b"));
  }
  (void)c.AddJob(MakeJob("ns", "train").MinAvailable(3));
  for (int i = 0; i < 3; ++i) {
    (void)c.AddTask(MakeTask(fmt::format("train-{}", i)).Job("ns/train").Request("cpu", "1"));
  }
  return c;
}

struct Cycle {
  RecordingBinder binder;
  RecordingStatusSink sink;
  absl::Status Run(ClusterInfo c, const std::string& yaml) {
    auto config = ParseSchedulerConfig(yaml);
    if (!config.ok()) return config.status();
    PluginRegistry plugins = NewInTreeRegistry();
    ActionRegistry actions = NewInTreeActionRegistry();
    CycleDeps deps{&plugins, &actions, &binder, nullptr, &sink};
    return RunCycle(std::move(c), *config, deps, "s1", testing::T(100));
  }
  // The zones the job's bound tasks landed in.
  std::set<std::string> Zones() const {
    std::set<std::string> zones;
    for (const auto& [task, node] : binder.Bound()) {
      zones.insert((node.back() - '0') % 2 == 0 ? "a" : "b");
    }
    return zones;
  }
};

TEST_CASE("example_zone: a job's tasks stay in one zone where nodeorder alone spreads them",
          "[sched][plugins][example_zone]") {
  Cycle without;
  REQUIRE(without.Run(TwoZones(), Config("")).ok());
  REQUIRE(without.binder.Bound().size() == 3);
  CHECK(without.Zones() == std::set<std::string>{"a", "b"});

  Cycle with;
  REQUIRE(with.Run(TwoZones(), Config(R"(  - name: example_zone
    arguments:
      example_zone.weight: 10)"))
              .ok());
  REQUIRE(with.binder.Bound().size() == 3);
  CHECK(with.Zones().size() == 1);
}

TEST_CASE("example_zone: a task joins the zone of its job's running tasks",
          "[sched][plugins][example_zone]") {
  ClusterInfo c = TwoZones();
  // train-0 already runs on n1 (zone b).
  (void)c.AddTask(MakeTask("train-run")
                      .Job("ns/train")
                      .Request("cpu", "1")
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  Cycle cycle;
  REQUIRE(cycle.Run(std::move(c), Config("  - name: example_zone\n")).ok());
  REQUIRE(cycle.binder.Bound().size() == 3);
  CHECK(cycle.Zones() == std::set<std::string>{"b"});
}

TEST_CASE("example_zone: a negative weight or an empty label is refused",
          "[sched][plugins][example_zone]") {
  Arguments negative(
      std::map<std::string, std::string, std::less<>>{{"example_zone.weight", "-1"}});
  CHECK(!NewExampleZonePlugin(negative).ok());
  Arguments empty_label(
      std::map<std::string, std::string, std::less<>>{{"example_zone.label", ""}});
  CHECK(!NewExampleZonePlugin(empty_label).ok());
  CHECK(NewExampleZonePlugin(Arguments()).ok());
}

}  // namespace
}  // namespace basalt::sched
