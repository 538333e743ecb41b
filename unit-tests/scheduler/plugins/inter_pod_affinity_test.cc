#include "scheduler/plugins/interpodaffinity/inter_pod_affinity.h"

#include <catch2/catch.hpp>

#include "scheduler/api/fit_error.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::kHostname;
using testing::kZone;
using testing::MakeNode;
using testing::MakeTask;
using testing::MakeTerm;
using Op = NodeSelectorRequirement::Operator;

const std::string kFits;
const std::string kAffinity(kReasonPodAffinity);
const std::string kAnti(kReasonPodAntiAffinity);
const std::string kExisting(kReasonExistingPodsAntiAffinity);

// n1, n2 in zone a; n3, n4 in zone b; n5 has no zone label. Every node has its hostname label.
ClusterInfo Zones(const std::vector<TaskInfo>& placed) {
  ClusterInfo c;
  for (const auto& [name, zone] : std::vector<std::pair<std::string, std::string>>{
           {"n1", "a"}, {"n2", "a"}, {"n3", "b"}, {"n4", "b"}, {"n5", ""}}) {
    MakeNode n = MakeNode(name).Allocatable("cpu", "8");
    n.Label(kHostname, name);
    if (!zone.empty()) n.Label(kZone, zone);
    REQUIRE(c.AddNode(n).ok());
  }
  for (const TaskInfo& t : placed) REQUIRE(c.AddTask(t).ok());
  return c;
}

TaskInfo Placed(MakeTask t, std::string node, TaskStatus status = TaskStatus::kRunning) {
  return t.Node(std::move(node)).Status(status).Build();
}

struct Case {
  std::string name;
  std::vector<TaskInfo> placed;
  TaskInfo task;
  std::map<std::string, std::string> want;  // node -> "" (fits) or the reason
};

TEST_CASE("InterPodAffinity: required affinity and anti-affinity table", "[sched][podaffinity]") {
  const TaskInfo web = Placed(MakeTask("web").Label("app", "web"), "n1");
  const TaskInfo plain = Placed(MakeTask("plain").Label("tier", "x"), "n3");
  const TaskInfo web_other_ns =
      Placed(MakeTask("web2").Namespace("other").Label("app", "web"), "n1");
  std::vector<Case> cases = {
      {"affinity matchLabels, zone topology",
       {web},
       MakeTask("t").PodAffinity(MakeTerm(kZone).MatchLabel("app", "web")),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity matchLabels, hostname topology",
       {web},
       MakeTask("t").PodAffinity(MakeTerm(kHostname).MatchLabel("app", "web")),
       {{"n1", kFits}, {"n2", kAffinity}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity matchExpressions In",
       {web, plain},
       MakeTask("t").PodAffinity(MakeTerm(kZone).MatchExpression("app", Op::kIn, {"db", "web"})),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity matchExpressions NotIn also matches pods without the label",
       {web, plain},
       MakeTask("t").PodAffinity(MakeTerm(kZone).MatchExpression("app", Op::kNotIn, {"web"})),
       {{"n1", kAffinity}, {"n2", kAffinity}, {"n3", kFits}, {"n4", kFits}, {"n5", kAffinity}}},
      {"affinity matchExpressions Exists",
       {web, plain},
       MakeTask("t").PodAffinity(MakeTerm(kHostname).MatchExpression("tier", Op::kExists)),
       {{"n1", kAffinity}, {"n2", kAffinity}, {"n3", kFits}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity matchExpressions DoesNotExist",
       {web, plain},
       MakeTask("t").PodAffinity(MakeTerm(kZone).MatchExpression("tier", Op::kDoesNotExist)),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity terms are ANDed",
       {web, plain},
       MakeTask("t")
           .PodAffinity(MakeTerm(kZone).MatchLabel("app", "web"))
           .PodAffinity(MakeTerm(kZone).MatchLabel("tier", "x")),
       {{"n1", kAffinity},
        {"n2", kAffinity},
        {"n3", kAffinity},
        {"n4", kAffinity},
        {"n5", kAffinity}}},
      {"affinity nothing matches, pod does not match itself",
       {web},
       MakeTask("t").PodAffinity(MakeTerm(kZone).MatchLabel("app", "db")),
       {{"n1", kAffinity},
        {"n2", kAffinity},
        {"n3", kAffinity},
        {"n4", kAffinity},
        {"n5", kAffinity}}},
      {"affinity first pod of a self-affine group goes anywhere with the topology key",
       {web},
       MakeTask("t").Label("app", "db").PodAffinity(MakeTerm(kZone).MatchLabel("app", "db")),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kFits}, {"n4", kFits}, {"n5", kAffinity}}},
      {"affinity without labelSelector matches no pod",
       {web},
       MakeTask("t").Label("app", "web").PodAffinity(MakeTerm(kZone).NoSelector()),
       {{"n1", kAffinity},
        {"n2", kAffinity},
        {"n3", kAffinity},
        {"n4", kAffinity},
        {"n5", kAffinity}}},
      {"affinity looks in the pod's own namespace by default",
       {web_other_ns},
       MakeTask("t").PodAffinity(MakeTerm(kZone).MatchLabel("app", "web")),
       {{"n1", kAffinity},
        {"n2", kAffinity},
        {"n3", kAffinity},
        {"n4", kAffinity},
        {"n5", kAffinity}}},
      {"affinity namespaces list",
       {web_other_ns},
       MakeTask("t").PodAffinity(
           MakeTerm(kZone).MatchLabel("app", "web").Namespaces({"ns", "other"})),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity empty namespaceSelector selects every namespace",
       {web_other_ns},
       MakeTask("t").PodAffinity(
           MakeTerm(kZone).MatchLabel("app", "web").NamespaceSelector(LabelSelector{})),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"affinity namespaceSelector on the namespace name label",
       {web_other_ns},
       MakeTask("t").PodAffinity(
           MakeTerm(kZone)
               .MatchLabel("app", "web")
               .NamespaceSelector(LabelSelector{{{"kubernetes.io/metadata.name", "other"}}, {}})),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAffinity}, {"n4", kAffinity}, {"n5", kAffinity}}},
      {"anti-affinity hostname",
       {web},
       MakeTask("t").PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "web")),
       {{"n1", kAnti}, {"n2", kFits}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
      {"anti-affinity zone, a node without the zone label fits",
       {web},
       MakeTask("t").PodAntiAffinity(MakeTerm(kZone).MatchLabel("app", "web")),
       {{"n1", kAnti}, {"n2", kAnti}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
      {"anti-affinity matchExpressions NotIn",
       {web, plain},
       MakeTask("t").PodAntiAffinity(MakeTerm(kZone).MatchExpression("app", Op::kNotIn, {"web"})),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kAnti}, {"n4", kAnti}, {"n5", kFits}}},
      {"placed pod's anti-affinity repels a matching pod (symmetry)",
       {Placed(MakeTask("guard")
                   .Label("app", "guard")
                   .PodAntiAffinity(MakeTerm(kZone).MatchLabel("app", "batch")),
               "n1")},
       MakeTask("t").Label("app", "batch"),
       {{"n1", kExisting}, {"n2", kExisting}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
      {"placed pod's anti-affinity ignores pods it does not select",
       {Placed(MakeTask("guard").PodAntiAffinity(MakeTerm(kZone).MatchLabel("app", "batch")),
               "n1")},
       MakeTask("t").Label("app", "web"),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
      {"placed pod's anti-affinity uses its own namespace",
       {Placed(MakeTask("guard").Namespace("other").PodAntiAffinity(
                   MakeTerm(kHostname).MatchLabel("app", "batch").Namespaces({"other"})),
               "n1")},
       MakeTask("t").Label("app", "batch"),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
      {"a releasing pod no longer counts",
       {Placed(MakeTask("web").Label("app", "web"), "n1", TaskStatus::kReleasing)},
       MakeTask("t").PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "web")),
       {{"n1", kFits}, {"n2", kFits}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
      {"pipelined pods count",
       {Placed(MakeTask("web").Label("app", "web"), "n2", TaskStatus::kPipelined)},
       MakeTask("t").PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "web")),
       {{"n1", kFits}, {"n2", kAnti}, {"n3", kFits}, {"n4", kFits}, {"n5", kFits}}},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      ClusterInfo cluster = Zones(c.placed);
      InterPodAffinity affinity(cluster);
      for (const auto& [node, reason] : c.want) {
        Outcome o = affinity.Filter(c.task, *cluster.FindNode(node), "predicates");
        INFO("node " << node);
        CHECK(o.Message() == reason);
        if (reason == kAffinity) CHECK(o.code() == Code::kUnschedulableAndUnresolvable);
        if (reason == kAnti || reason == kExisting) CHECK(o.code() == Code::kUnschedulable);
      }
    }
  }
}

TEST_CASE("InterPodAffinity: placements after PlacementChanged are seen", "[sched][podaffinity]") {
  ClusterInfo cluster = Zones({});
  REQUIRE(cluster.AddJob(testing::MakeJob("ns", "pg")).ok());
  REQUIRE(cluster.AddTask(MakeTask("a").Job("ns/pg").Label("app", "web")).ok());
  InterPodAffinity affinity(cluster);
  TaskInfo t = MakeTask("t").PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "web"));
  CHECK_FALSE(affinity.Any());  // only t has terms, and it is not in the snapshot
  NodeInfo* n2 = cluster.FindNode("n2");
  CHECK(affinity.Filter(t, *n2, "p").ok());

  // "a" is placed on n2 (as a session allocation does), then taken off again.
  JobInfo* job = cluster.FindJob("ns/pg");
  TaskInfo* a = job->FindTask("uid-a");
  REQUIRE(a != nullptr);
  a->node_name = "n2";
  job->UpdateTaskStatus(a, TaskStatus::kAllocated);
  REQUIRE(n2->AddTask(a).ok());
  affinity.PlacementChanged();
  CHECK(affinity.Filter(t, *n2, "p").Message() == kAnti);
  CHECK(affinity.Filter(t, *cluster.FindNode("n1"), "p").ok());
  REQUIRE(n2->RemoveTask(*a).ok());
  a->node_name.clear();
  job->UpdateTaskStatus(a, TaskStatus::kPending);
  affinity.PlacementChanged();
  CHECK(affinity.Filter(t, *n2, "p").ok());
}

TEST_CASE("InterPodAffinity: pods alike on the labels terms look at share counts, others do not",
          "[sched][podaffinity]") {
  ClusterInfo cluster = Zones(
      {Placed(MakeTask("guard").PodAntiAffinity(MakeTerm(kZone).MatchLabel("app", "web")), "n1")});
  InterPodAffinity affinity(cluster);
  const NodeInfo& n2 = *cluster.FindNode("n2");
  const NodeInfo& n3 = *cluster.FindNode("n3");
  TaskInfo web0 = MakeTask("web-0").Label("app", "web").Label("volcano.sh/task-index", "0");
  TaskInfo web1 = MakeTask("web-1").Label("app", "web").Label("volcano.sh/task-index", "1");
  TaskInfo db = MakeTask("db").Label("app", "db").Label("volcano.sh/task-index", "0");
  TaskInfo other_ns = MakeTask("web-x").Namespace("other").Label("app", "web");
  TaskInfo unlabelled = MakeTask("bare");
  CHECK(affinity.Filter(web0, n2, "p").Message() == kExisting);
  CHECK(affinity.Filter(web1, n2, "p").Message() == kExisting);
  CHECK(affinity.Filter(db, n2, "p").ok());
  CHECK(affinity.Filter(web1, n2, "p").Message() == kExisting);
  CHECK(affinity.Filter(other_ns, n2, "p").ok());  // the guard's term looks in "ns" only
  CHECK(affinity.Filter(unlabelled, n2, "p").ok());
  CHECK(affinity.Filter(web0, n3, "p").ok());
}

TEST_CASE("predicates: pod anti-affinity follows evictions, allocations and their undo",
          "[sched][podaffinity]") {
  ClusterInfo c = Zones({});
  REQUIRE(c.AddQueue(testing::MakeQueue("default")).ok());
  REQUIRE(c.AddJob(testing::MakeJob("ns", "old")).ok());
  REQUIRE(c.AddTask(Placed(MakeTask("web").Job("ns/old").Label("app", "web"), "n1")).ok());
  REQUIRE(c.AddJob(testing::MakeJob("ns", "new").MinAvailable(2)).ok());
  for (const char* name : {"t1", "t2"}) {
    REQUIRE(c.AddTask(MakeTask(name)
                          .Job("ns/new")
                          .Label("app", "web")
                          .PodAntiAffinity(MakeTerm(kHostname).MatchLabel("app", "web")))
                .ok());
  }
  const PluginRegistry plugins = NewInTreeRegistry();
  auto opened =
      Session::Open(std::move(c), DefaultSchedulerConfig(), plugins, SessionOptions{"s1", {}});
  REQUIRE(opened.ok());
  Session& ssn = **opened;
  NodeInfo* n1 = ssn.FindNode("n1");
  NodeInfo* n2 = ssn.FindNode("n2");
  TaskInfo* web = ssn.FindJob("ns/old")->FindTask("uid-web");
  TaskInfo* t1 = ssn.FindJob("ns/new")->FindTask("uid-t1");
  TaskInfo* t2 = ssn.FindJob("ns/new")->FindTask("uid-t2");

  CHECK(ssn.Predicate(*t1, *n1).Message() == kAnti);
  CHECK(ssn.Predicate(*t1, *n2).ok());
  CHECK(ssn.Predicate(*t2, *n1).Message() == kAnti);  // t2 shares t1's counts

  Statement evict(&ssn);
  REQUIRE(evict.Evict(web, "preempted").ok());
  CHECK(ssn.Predicate(*t2, *n1).ok());  // a Releasing pod no longer repels
  evict.Discard();
  CHECK(ssn.Predicate(*t2, *n1).Message() == kAnti);

  Statement alloc(&ssn);
  REQUIRE(alloc.Allocate(t1, n2).ok());
  CHECK(ssn.Predicate(*t2, *n2).Message() == kAnti);  // t1 placed in this session repels t2
  CHECK(ssn.Predicate(*t2, *ssn.FindNode("n3")).ok());
  alloc.Discard();
  CHECK(ssn.Predicate(*t2, *n2).ok());
  CHECK(ssn.Predicate(*t1, *n2).ok());
}

TEST_CASE("InterPodAffinity: preferred terms score topology domains 0..100",
          "[sched][podaffinity]") {
  const TaskInfo web = Placed(MakeTask("web").Label("app", "web"), "n1");
  ClusterInfo cluster = Zones({web});
  std::vector<const NodeInfo*> nodes;
  for (const auto& [name, node] : cluster.nodes()) nodes.push_back(&node);

  InterPodAffinity affinity(cluster);
  CHECK(affinity.Score(MakeTask("t"), nodes).empty());  // nothing has terms
  CHECK(affinity.Score(
            MakeTask("t").PreferredPodAffinity(10, MakeTerm(kZone).MatchLabel("app", "web")),
            nodes) == std::vector<int64_t>{100, 100, 0, 0, 0});
  CHECK(affinity.Score(MakeTask("t").PreferredPodAntiAffinity(
                           10, MakeTerm(kHostname).MatchLabel("app", "web")),
                       nodes) == std::vector<int64_t>{0, 100, 100, 100, 100});
  // Affinity to zone a (weight 10) outweighs anti-affinity to host n1 (weight 5).
  CHECK(
      affinity.Score(MakeTask("t")
                         .PreferredPodAffinity(10, MakeTerm(kZone).MatchLabel("app", "web"))
                         .PreferredPodAntiAffinity(5, MakeTerm(kHostname).MatchLabel("app", "web")),
                     nodes) == std::vector<int64_t>{50, 100, 0, 0, 0});

  // A placed pod's own preferred affinity for the incoming pod counts too (symmetry).
  ClusterInfo sym = Zones({Placed(
      MakeTask("cache").PreferredPodAffinity(7, MakeTerm(kZone).MatchLabel("app", "web")), "n3")});
  std::vector<const NodeInfo*> sym_nodes;
  for (const auto& [name, node] : sym.nodes()) sym_nodes.push_back(&node);
  InterPodAffinity sym_affinity(sym);
  CHECK(sym_affinity.Any());
  CHECK(sym_affinity.Score(MakeTask("t").Label("app", "web"), sym_nodes) ==
        std::vector<int64_t>{0, 0, 100, 100, 0});
  CHECK(sym_affinity.Score(MakeTask("t").Label("app", "db"), sym_nodes).empty());
}

}  // namespace
}  // namespace basalt::sched
