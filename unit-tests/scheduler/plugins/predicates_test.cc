#include "scheduler/plugins/predicates/predicates.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeNode;
using testing::MakeTask;
using Op = NodeSelectorRequirement::Operator;

struct Case {
  std::string name;
  TaskInfo task;
  NodeInfo node;
  Code code;
  std::string reason;  // empty for success
};

TEST_CASE("predicates: filter table", "[sched][predicates]") {
  NodeInfo plain = MakeNode("n").Allocatable("cpu", "4").Label("zone", "a").Label("gen", "5");
  NodeInfo tainted =
      MakeNode("n").Allocatable("cpu", "4").WithTaint("gpu", "true", TaintEffect::kNoSchedule);
  NodeInfo soft =
      MakeNode("n").Allocatable("cpu", "4").WithTaint("spot", "", TaintEffect::kPreferNoSchedule);
  NodeInfo cordoned = MakeNode("n").Allocatable("cpu", "4").Unschedulable();
  NodeInfo full = MakeNode("n").Allocatable("cpu", "4").MaxPods(1);
  TaskInfo occupant =
      MakeTask("o").Request("cpu", "1").Node("n").Status(TaskStatus::kRunning).HostPort(8080);
  REQUIRE(full.AddTask(&occupant).ok());

  const std::string affinity(kReasonNodeAffinity);
  std::vector<Case> cases = {
      {"no constraints", MakeTask("t"), plain, Code::kSuccess, ""},
      {"node selector matches", MakeTask("t").NodeSelector("zone", "a"), plain, Code::kSuccess, ""},
      {"node selector mismatch", MakeTask("t").NodeSelector("zone", "b"), plain,
       Code::kUnschedulableAndUnresolvable, affinity},
      {"affinity In", MakeTask("t").RequiredAffinity({{{{"zone", Op::kIn, {"a", "c"}}}, {}}}),
       plain, Code::kSuccess, ""},
      {"affinity NotIn", MakeTask("t").RequiredAffinity({{{{"zone", Op::kNotIn, {"a"}}}, {}}}),
       plain, Code::kUnschedulableAndUnresolvable, affinity},
      {"affinity Exists", MakeTask("t").RequiredAffinity({{{{"zone", Op::kExists, {}}}, {}}}),
       plain, Code::kSuccess, ""},
      {"affinity DoesNotExist",
       MakeTask("t").RequiredAffinity({{{{"zone", Op::kDoesNotExist, {}}}, {}}}), plain,
       Code::kUnschedulableAndUnresolvable, affinity},
      {"affinity Gt", MakeTask("t").RequiredAffinity({{{{"gen", Op::kGt, {"4"}}}, {}}}), plain,
       Code::kSuccess, ""},
      {"affinity Lt", MakeTask("t").RequiredAffinity({{{{"gen", Op::kLt, {"4"}}}, {}}}), plain,
       Code::kUnschedulableAndUnresolvable, affinity},
      {"affinity terms are ORed",
       MakeTask("t").RequiredAffinity(
           {{{{"zone", Op::kIn, {"x"}}}, {}}, {{{"gen", Op::kIn, {"5"}}}, {}}}),
       plain, Code::kSuccess, ""},
      {"affinity on node name", MakeTask("t").RequiredAffinity({{{}, {"n"}}}), plain,
       Code::kSuccess, ""},
      {"untolerated taint", MakeTask("t"), tainted, Code::kUnschedulableAndUnresolvable,
       "node(s) had untolerated taint {gpu: true}"},
      {"tolerated by Equal",
       MakeTask("t").Tolerate(
           {"gpu", Toleration::Operator::kEqual, "true", TaintEffect::kNoSchedule}),
       tainted, Code::kSuccess, ""},
      {"tolerated by Exists",
       MakeTask("t").Tolerate({"gpu", Toleration::Operator::kExists, "", std::nullopt}), tainted,
       Code::kSuccess, ""},
      {"wrong toleration value",
       MakeTask("t").Tolerate({"gpu", Toleration::Operator::kEqual, "false", std::nullopt}),
       tainted, Code::kUnschedulableAndUnresolvable, "node(s) had untolerated taint {gpu: true}"},
      {"PreferNoSchedule does not filter", MakeTask("t"), soft, Code::kSuccess, ""},
      {"cordoned node", MakeTask("t"), cordoned, Code::kUnschedulableAndUnresolvable,
       std::string(kReasonUnschedulableNode)},
      {"cordoned but tolerated",
       MakeTask("t").Tolerate(
           {"node.kubernetes.io/unschedulable", Toleration::Operator::kExists, "", std::nullopt}),
       cordoned, Code::kSuccess, ""},
      {"host port taken", MakeTask("t").HostPort(8080), full, Code::kUnschedulable,
       std::string(kReasonHostPorts)},
      {"pod count", MakeTask("t").HostPort(9090), full, Code::kUnschedulable,
       std::string(kReasonPodCountExceeded)},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Outcome o = CheckPredicates(c.task, c.node, PredicateOptions{});
      CHECK(o.code() == c.code);
      if (!c.reason.empty()) CHECK(o.Message() == c.reason);
    }
  }
}

struct PortCase {
  std::string name;
  TaskInfo occupant;
  TaskInfo task;
  bool conflict;
};

TEST_CASE("predicates: host ports conflict by port, protocol and host IP", "[sched][predicates]") {
  auto on_node = [](MakeTask t) { return t.Node("n").Status(TaskStatus::kRunning).Build(); };
  std::vector<PortCase> cases = {
      {"same port, both every address", on_node(MakeTask("o").HostPort(80)),
       MakeTask("t").HostPort(80), true},
      {"different port", on_node(MakeTask("o").HostPort(80)), MakeTask("t").HostPort(81), false},
      {"same port, UDP vs TCP", on_node(MakeTask("o").HostPort(53, "0.0.0.0", "UDP")),
       MakeTask("t").HostPort(53, "0.0.0.0", "TCP"), false},
      {"same port, both UDP", on_node(MakeTask("o").HostPort(53, "0.0.0.0", "UDP")),
       MakeTask("t").HostPort(53, "0.0.0.0", "UDP"), true},
      {"0.0.0.0 taken, specific IP wanted", on_node(MakeTask("o").HostPort(80, "0.0.0.0")),
       MakeTask("t").HostPort(80, "10.0.0.1"), true},
      {"specific IP taken, 0.0.0.0 wanted", on_node(MakeTask("o").HostPort(80, "10.0.0.1")),
       MakeTask("t").HostPort(80, "0.0.0.0"), true},
      {"specific IP taken, empty IP (every address) wanted",
       on_node(MakeTask("o").HostPort(80, "10.0.0.1")), MakeTask("t").HostPort(80), true},
      {"two different specific IPs", on_node(MakeTask("o").HostPort(80, "10.0.0.1")),
       MakeTask("t").HostPort(80, "10.0.0.2"), false},
      {"same specific IP", on_node(MakeTask("o").HostPort(80, "10.0.0.1")),
       MakeTask("t").HostPort(80, "10.0.0.1"), true},
      {"one of several ports taken", on_node(MakeTask("o").HostPort(80).HostPort(443)),
       MakeTask("t").HostPort(8080).HostPort(443), true},
      {"task without host ports", on_node(MakeTask("o").HostPort(80)), MakeTask("t"), false},
      {"pipelined occupant holds its ports",
       MakeTask("o").HostPort(80).Node("n").Status(TaskStatus::kPipelined),
       MakeTask("t").HostPort(80), true},
  };
  for (auto& c : cases) {
    SECTION(c.name) {
      NodeInfo node = MakeNode("n").Allocatable("cpu", "4");
      REQUIRE(node.AddTask(&c.occupant).ok());
      Outcome o = CheckPredicates(c.task, node, PredicateOptions{});
      if (c.conflict) {
        CHECK(o.code() == Code::kUnschedulable);
        CHECK(o.Message() == "node(s) didn't have free ports for the requested pod ports");
      } else {
        CHECK(o.ok());
      }
      // Once the occupant leaves, the port is free again.
      REQUIRE(node.RemoveTask(c.occupant).ok());
      CHECK(node.used_ports().empty());
      CHECK(CheckPredicates(c.task, node, PredicateOptions{}).ok());
    }
  }
}

TEST_CASE("predicates: arguments turn filters off", "[sched][predicates]") {
  auto o = ParsePredicateOptions(testing::Args({{"predicate.NodeAffinityEnable", "false"}}));
  REQUIRE(o.ok());
  NodeInfo node = MakeNode("n").Allocatable("cpu", "1");
  CHECK(CheckPredicates(MakeTask("t").NodeSelector("zone", "b"), node, *o).ok());
  CHECK_FALSE(
      ParsePredicateOptions(testing::Args({{"predicate.NodePortsEnable", "perhaps"}})).ok());
  auto no_ports = ParsePredicateOptions(testing::Args({{"predicate.NodePortsEnable", "false"}}));
  REQUIRE(no_ports.ok());
  TaskInfo occupant = MakeTask("o").Node("n").Status(TaskStatus::kRunning).HostPort(80);
  REQUIRE(node.AddTask(&occupant).ok());
  CHECK_FALSE(CheckPredicates(MakeTask("t").HostPort(80), node, PredicateOptions{}).ok());
  CHECK(CheckPredicates(MakeTask("t").HostPort(80), node, *no_ports).ok());
  auto no_affinity =
      ParsePredicateOptions(testing::Args({{"predicate.PodAffinityEnable", "false"}}));
  REQUIRE(no_affinity.ok());
  CHECK_FALSE(no_affinity->pod_affinity);
  CHECK(PredicateOptions{}.pod_affinity);
}

}  // namespace
}  // namespace basalt::sched
