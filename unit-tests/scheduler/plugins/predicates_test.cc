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

TEST_CASE("predicates: arguments turn filters off", "[sched][predicates]") {
  auto o = ParsePredicateOptions(testing::Args({{"predicate.NodeAffinityEnable", "false"}}));
  REQUIRE(o.ok());
  NodeInfo node = MakeNode("n").Allocatable("cpu", "1");
  CHECK(CheckPredicates(MakeTask("t").NodeSelector("zone", "b"), node, *o).ok());
  CHECK_FALSE(
      ParsePredicateOptions(testing::Args({{"predicate.NodePortsEnable", "perhaps"}})).ok());
}

}  // namespace
}  // namespace basalt::sched
