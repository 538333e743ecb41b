#include "scheduler/framework/session.h"

#include <catch2/catch.hpp>

#include "scheduler/framework/statement.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

// A plugin whose OnSessionOpen is a lambda.
class LambdaPlugin final : public Plugin {
 public:
  LambdaPlugin(std::string name, std::function<void(Session&, std::string_view)> open)
      : name_(std::move(name)), open_(std::move(open)) {}
  std::string_view Name() const override { return name_; }
  void OnSessionOpen(Session& ssn) override { open_(ssn, name_); }

 private:
  std::string name_;
  std::function<void(Session&, std::string_view)> open_;
};

struct Harness {
  PluginRegistry registry;
  SchedulerConfig config;

  void Add(const std::string& name, int tier, std::function<void(Session&, std::string_view)> open,
           std::map<std::string, bool, std::less<>> flags = {}) {
    registry.Register(name,
                      [name, open](const Arguments&) -> absl::StatusOr<std::unique_ptr<Plugin>> {
                        return std::make_unique<LambdaPlugin>(name, open);
                      });
    while (static_cast<int>(config.tiers.size()) <= tier) config.tiers.emplace_back();
    PluginOption o;
    o.name = name;
    o.flags = std::move(flags);
    config.tiers[tier].plugins.push_back(std::move(o));
  }

  std::unique_ptr<Session> Open(ClusterInfo c, Binder* binder = nullptr) {
    auto ssn =
        Session::Open(std::move(c), config, registry, SessionOptions{"s1", {}, binder, nullptr});
    REQUIRE(ssn.ok());
    return *std::move(ssn);
  }
};

ClusterInfo TwoJobs() {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddJob(MakeJob("ns", "a").Created(2));
  (void)c.AddJob(MakeJob("ns", "b").Created(1));
  return c;
}

TEST_CASE("Session: order fns take the first non-zero answer across tiers, then creation time",
          "[sched][session]") {
  Harness h;
  h.Add("abstains", 0, [](Session& s, std::string_view n) {
    s.AddJobOrderFn(n, [](const JobInfo&, const JobInfo&) { return 0; });
  });
  h.Add("a-first", 1, [](Session& s, std::string_view n) {
    s.AddJobOrderFn(n, [](const JobInfo& l, const JobInfo&) { return l.name == "a" ? -1 : 1; });
  });
  h.Add("b-first", 1, [](Session& s, std::string_view n) {
    s.AddJobOrderFn(n, [](const JobInfo& l, const JobInfo&) { return l.name == "b" ? -1 : 1; });
  });
  auto ssn = h.Open(TwoJobs());
  const JobInfo& a = *ssn->FindJob("ns/a");
  const JobInfo& b = *ssn->FindJob("ns/b");
  CHECK(ssn->JobOrder(a, b));
  CHECK_FALSE(ssn->JobOrder(b, a));

  Harness none;
  none.Add("a-first", 0,
           [](Session& s, std::string_view n) {
             s.AddJobOrderFn(
                 n, [](const JobInfo& l, const JobInfo&) { return l.name == "a" ? -1 : 1; });
           },
           {{"enableJobOrder", false}});
  auto ssn2 = none.Open(TwoJobs());
  // Disabled plugin: fallback to creation time (b is older).
  CHECK(ssn2->JobOrder(*ssn2->FindJob("ns/b"), *ssn2->FindJob("ns/a")));
}

TEST_CASE("Session: enqueueable votes: Reject wins, a Permit ends the search, abstain moves on",
          "[sched][session]") {
  auto vote = [](int v) {
    return [v](Session& s, std::string_view n) {
      s.AddJobEnqueueableFn(n, [v](const JobInfo&) { return v; });
    };
  };
  {
    Harness h;
    h.Add("permit", 0, vote(kPermit));
    h.Add("reject", 0, vote(kReject));
    auto ssn = h.Open(TwoJobs());
    CHECK_FALSE(ssn->JobEnqueueable(*ssn->FindJob("ns/a")));
  }
  {
    Harness h;
    h.Add("permit", 0, vote(kPermit));
    h.Add("reject", 1, vote(kReject));
    auto ssn = h.Open(TwoJobs());
    CHECK(ssn->JobEnqueueable(*ssn->FindJob("ns/a")));  // tier 1 permitted, tier 2 never asked
  }
  {
    Harness h;
    h.Add("abstain", 0, vote(kAbstain));
    h.Add("reject", 1, vote(kReject));
    auto ssn = h.Open(TwoJobs());
    CHECK_FALSE(ssn->JobEnqueueable(*ssn->FindJob("ns/a")));
  }
  {
    Harness h;
    h.Add("abstain", 0, vote(kAbstain));
    auto ssn = h.Open(TwoJobs());
    CHECK(ssn->JobEnqueueable(*ssn->FindJob("ns/a")));  // no decision -> true
  }
  {
    Harness h;
    h.Add("reject", 0, vote(kReject), {{"enableJobEnqueued", false}});
    auto ssn = h.Open(TwoJobs());
    CHECK(ssn->JobEnqueueable(*ssn->FindJob("ns/a")));
  }
}

TEST_CASE("Session: preemptable intersects within a tier and falls through on empty",
          "[sched][session]") {
  ClusterInfo c = TwoJobs();
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  for (const char* t : {"v1", "v2", "v3"}) {
    (void)c.AddTask(
        MakeTask(t).Job("ns/a").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning));
  }
  (void)c.AddTask(MakeTask("p").Job("ns/b").Request("cpu", "1"));
  auto allow = [](std::set<std::string> names) {
    return [names](Session& s, std::string_view n) {
      s.AddPreemptableFn(n,
                         [names](const TaskInfo&, const std::vector<const TaskInfo*>& cands)
                             -> std::optional<std::vector<const TaskInfo*>> {
                           std::vector<const TaskInfo*> out;
                           for (const TaskInfo* t : cands) {
                             if (names.count(t->name)) out.push_back(t);
                           }
                           return out;
                         });
    };
  };
  Harness h;
  h.Add("x", 0, allow({"v1", "v2"}));
  h.Add("y", 0, allow({"v3"}));  // tier 1 intersection is empty
  h.Add("z", 1, allow({"v2", "v3"}));
  h.Add("w", 1, allow({"v1", "v2", "v3"}));
  auto ssn = h.Open(std::move(c));
  std::vector<const TaskInfo*> cands;
  for (const auto& [uid, t] : ssn->FindJob("ns/a")->tasks()) cands.push_back(&t);
  auto victims = ssn->Preemptable(*ssn->FindJob("ns/b")->FindTask("uid-p"), cands);
  REQUIRE(victims.size() == 2);
  CHECK(victims[0]->name == "v2");
  CHECK(victims[1]->name == "v3");
}

TEST_CASE("Session: starving uses the first tier with a fn, overused ORs, allocatable ANDs",
          "[sched][session]") {
  Harness h;
  h.Add("starving", 0, [](Session& s, std::string_view n) {
    s.AddJobStarvingFn(n, [](const JobInfo&) { return true; });
    s.AddOverusedFn(n, [](const QueueInfo&) { return false; });
    s.AddAllocatableFn(n, [](const QueueInfo&, const TaskInfo&) { return true; });
  });
  h.Add("not-starving", 1, [](Session& s, std::string_view n) {
    s.AddJobStarvingFn(n, [](const JobInfo&) { return false; });
    s.AddOverusedFn(n, [](const QueueInfo&) { return true; });
    s.AddAllocatableFn(n, [](const QueueInfo&, const TaskInfo&) { return false; });
  });
  auto ssn = h.Open(TwoJobs());
  CHECK(ssn->JobStarving(*ssn->FindJob("ns/a")));
  CHECK(ssn->Overused(*ssn->FindQueue("default")));
  CHECK_FALSE(ssn->Allocatable(*ssn->FindQueue("default"), MakeTask("t").Build()));
}

TEST_CASE("Session: predicates stop at the first failure, node scores add up", "[sched][session]") {
  int calls = 0;
  Harness h;
  h.Add("fail", 0, [&calls](Session& s, std::string_view n) {
    s.AddPredicateFn(n, [&calls, p = std::string(n)](const TaskInfo&, const NodeInfo&) {
      ++calls;
      return Outcome::Unschedulable(p, "nope");
    });
    s.AddNodeOrderFn(n, [](const TaskInfo&, const NodeInfo&) { return 10.0; });
  });
  h.Add("never", 0, [&calls](Session& s, std::string_view n) {
    s.AddPredicateFn(n, [&calls](const TaskInfo&, const NodeInfo&) {
      ++calls;
      return Outcome::Success();
    });
    s.AddNodeOrderFn(n, [](const TaskInfo&, const NodeInfo&) { return 2.5; });
  });
  ClusterInfo c = TwoJobs();
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "1"));
  auto ssn = h.Open(std::move(c));
  Outcome o = ssn->Predicate(MakeTask("t").Build(), *ssn->FindNode("n1"));
  CHECK(o.code() == Code::kUnschedulable);
  CHECK(o.plugin() == "fail");
  CHECK(o.Message() == "nope");
  CHECK(calls == 1);
  CHECK(ssn->NodeOrder(MakeTask("t").Build(), *ssn->FindNode("n1")) == 12.5);
}

ClusterInfo GangCluster() {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 4));
  (void)c.AddJob(MakeJob("ns", "pg").MinAvailable(2));
  (void)c.AddTask(MakeTask("pg-t-0").Job("ns/pg").Request("nvidia.com/gpu", 2));
  (void)c.AddTask(MakeTask("pg-t-1").Job("ns/pg").Request("nvidia.com/gpu", 2));
  return c;
}

TEST_CASE("Statement: Discard rolls back node, job and plugin accounting", "[sched][statement]") {
  Harness h;
  int allocated = 0;
  h.Add("counter", 0, [&allocated](Session& s, std::string_view) {
    s.AddEventHandler(EventHandler{[&allocated](const TaskInfo&) { ++allocated; },
                                   [&allocated](const TaskInfo&) { --allocated; }});
  });
  auto ssn = h.Open(GangCluster());
  NodeInfo* n1 = ssn->FindNode("n1");
  JobInfo* job = ssn->FindJob("ns/pg");
  TaskInfo* t0 = job->FindTask("uid-pg-t-0");
  TaskInfo* t1 = job->FindTask("uid-pg-t-1");
  Statement stmt(ssn.get());
  REQUIRE(stmt.Allocate(t0, n1).ok());
  REQUIRE(stmt.Pipeline(t1, n1).ok());
  CHECK(n1->idle().Get("nvidia.com/gpu") == 2000);
  CHECK(n1->pipelined().Get("nvidia.com/gpu") == 2000);
  CHECK(job->allocated().Get("nvidia.com/gpu") == 2000);
  CHECK(allocated == 2);

  stmt.Discard();
  CHECK(n1->idle().Get("nvidia.com/gpu") == 4000);
  CHECK(n1->pipelined().IsEmpty());
  CHECK(n1->tasks().empty());
  CHECK(job->allocated().IsEmpty());
  CHECK(job->TaskCount(TaskStatus::kPending) == 2);
  CHECK(allocated == 0);
  CHECK(t0->node_name.empty());
  REQUIRE(t0->last_transaction.has_value());
  CHECK(t0->last_transaction->status == TaskStatus::kAllocated);
  CHECK(t0->last_transaction->node_name == "n1");
}

TEST_CASE("Statement: host ports are held by allocated and pipelined tasks until Discard",
          "[sched][statement]") {
  Harness h;
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8").Allocatable("nvidia.com/gpu", 4));
  (void)c.AddJob(MakeJob("ns", "pg").MinAvailable(2));
  (void)c.AddTask(
      MakeTask("pg-t-0").Job("ns/pg").Request("nvidia.com/gpu", 2).HostPort(8080, "0.0.0.0"));
  (void)c.AddTask(MakeTask("pg-t-1")
                      .Job("ns/pg")
                      .Request("nvidia.com/gpu", 2)
                      .HostPort(9090, "10.0.0.1", "UDP"));
  auto ssn = h.Open(std::move(c));
  NodeInfo* n1 = ssn->FindNode("n1");
  JobInfo* job = ssn->FindJob("ns/pg");
  Statement stmt(ssn.get());
  REQUIRE(stmt.Allocate(job->FindTask("uid-pg-t-0"), n1).ok());
  REQUIRE(stmt.Pipeline(job->FindTask("uid-pg-t-1"), n1).ok());
  CHECK(n1->used_ports() ==
        std::vector<HostPort>{{"TCP", "0.0.0.0", 8080}, {"UDP", "10.0.0.1", 9090}});
  CHECK(n1->HostPortsConflict({HostPort{"TCP", "10.0.0.7", 8080}}));
  CHECK(n1->HostPortsConflict({HostPort{"UDP", "0.0.0.0", 9090}}));

  stmt.Discard();
  CHECK(n1->used_ports().empty());
  CHECK_FALSE(n1->HostPortsConflict({HostPort{"TCP", "0.0.0.0", 8080}}));
}

TEST_CASE("Statement: Commit binds the gang once, tasks become Binding", "[sched][statement]") {
  Harness h;
  testing::RecordingBinder binder;
  auto ssn = h.Open(GangCluster(), &binder);
  NodeInfo* n1 = ssn->FindNode("n1");
  JobInfo* job = ssn->FindJob("ns/pg");
  Statement stmt(ssn.get());
  REQUIRE(stmt.Allocate(job->FindTask("uid-pg-t-0"), n1).ok());
  REQUIRE(stmt.Allocate(job->FindTask("uid-pg-t-1"), n1).ok());
  CHECK(stmt.Allocate(job->FindTask("uid-pg-t-1"), n1).code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(stmt.size() == 2);
  stmt.Commit();
  REQUIRE(binder.calls.size() == 1);
  CHECK(binder.calls[0].job_id == "ns/pg");
  CHECK(binder.calls[0].requests.size() == 2);
  CHECK(job->TaskCount(TaskStatus::kBinding) == 2);
  CHECK(n1->idle().Get("nvidia.com/gpu") == 0);
}

TEST_CASE("Statement: an allocation that does not fit leaves the session unchanged",
          "[sched][statement]") {
  Harness h;
  auto ssn = h.Open(GangCluster());
  ClusterInfo& c = ssn->cluster();
  (void)c;
  NodeInfo* n1 = ssn->FindNode("n1");
  JobInfo* job = ssn->FindJob("ns/pg");
  TaskInfo* t0 = job->FindTask("uid-pg-t-0");
  t0->resreq.SetUnits("nvidia.com/gpu", 5);
  Statement stmt(ssn.get());
  CHECK_FALSE(stmt.Allocate(t0, n1).ok());
  CHECK(stmt.Empty());
  CHECK(t0->status == TaskStatus::kPending);
  CHECK(n1->idle().Get("nvidia.com/gpu") == 4000);
}

TEST_CASE("Session: Close writes only changed PodGroup status and pod conditions",
          "[sched][session]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  JobInfo running = MakeJob("ns", "run").MinAvailable(1).Phase(PodGroupPhase::kInqueue);
  (void)c.AddJob(std::move(running));
  (void)c.AddTask(
      MakeTask("r").Job("ns/run").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning));
  JobInfo steady = MakeJob("ns", "steady").Phase(PodGroupPhase::kRunning);
  steady.podgroup_status.running = 1;
  (void)c.AddJob(std::move(steady));
  (void)c.AddTask(
      MakeTask("s").Job("ns/steady").Request("cpu", "1").Node("n1").Status(TaskStatus::kRunning));
  Harness h;
  auto ssn = h.Open(std::move(c));
  testing::RecordingStatusSink sink;
  ssn->Close(&sink);
  REQUIRE(sink.podgroups.size() == 1);
  CHECK(sink.podgroups[0].job_id == "ns/run");
  CHECK(sink.podgroups[0].status.phase == PodGroupPhase::kRunning);
  CHECK(sink.podgroups[0].status.running == 1);
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].reason == "Scheduled");
  REQUIRE(sink.queues.size() == 1);
  CHECK(sink.queues[0].allocated.milli_cpu() == 2000);
}

TEST_CASE(
    "Session: a bare pod's PodGroup (podgroup-<its pod uid>) turning Running gets its status but "
    "no Scheduled event",
    "[sched][session]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(MakeNode("n1").Allocatable("cpu", "8"));
  JobInfo bare = MakeJob("ns", "podgroup-uid-b").MinAvailable(1);
  bare.pods_precede_group = true;  // owned by a Pod (or a workload controller)
  (void)c.AddJob(std::move(bare));
  (void)c.AddTask(MakeTask("b")
                      .Job("ns/podgroup-uid-b")
                      .Request("cpu", "1")
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  // A ReplicaSet's PodGroup (named after the ReplicaSet, not its pod) keeps its event.
  JobInfo rs = MakeJob("ns", "podgroup-rs-uid").MinAvailable(1);
  rs.pods_precede_group = true;
  (void)c.AddJob(std::move(rs));
  (void)c.AddTask(MakeTask("r")
                      .Job("ns/podgroup-rs-uid")
                      .Request("cpu", "1")
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  Harness h;
  auto ssn = h.Open(std::move(c));
  testing::RecordingStatusSink sink;
  ssn->Close(&sink);
  REQUIRE(sink.podgroups.size() == 2);
  for (const auto& pg : sink.podgroups) {
    CHECK(pg.status.phase == PodGroupPhase::kRunning);
    CHECK(pg.status.running == 1);
  }
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].name == "podgroup-rs-uid");
  CHECK(sink.events[0].reason == "Scheduled");
}

TEST_CASE("Session: Close writes a queue's deserved and guarantee only when they changed",
          "[sched][session]") {
  Resource four_gpus;
  four_gpus.Set("nvidia.com/gpu", 4000);
  Resource two_gpus;
  two_gpus.Set("nvidia.com/gpu", 2000);
  ClusterInfo c;
  QueueInfo same = MakeQueue("same");  // the API already shows what the plugin computes
  same.status_deserved = four_gpus;
  same.status_guarantee = two_gpus;
  (void)c.AddQueue(same);
  QueueInfo fresh = MakeQueue("fresh");  // nothing written yet
  (void)c.AddQueue(fresh);
  QueueInfo moved = MakeQueue("moved");  // deserved changed, guarantee did not
  moved.status_deserved = two_gpus;
  moved.status_guarantee = two_gpus;
  (void)c.AddQueue(moved);
  QueueInfo unreported = MakeQueue("unreported");  // no share plugin reported it: left alone
  unreported.status_deserved = four_gpus;
  (void)c.AddQueue(unreported);
  Harness h;
  auto ssn = h.Open(std::move(c));
  ssn->ReportQueue("same", QueueShareReport{four_gpus, four_gpus, two_gpus, 0.0});
  ssn->ReportQueue("fresh", QueueShareReport{four_gpus, four_gpus, Resource(), 0.0});
  ssn->ReportQueue("moved", QueueShareReport{four_gpus, four_gpus, two_gpus, 0.0});
  testing::RecordingStatusSink sink;
  ssn->Close(&sink);
  std::map<std::string, QueueStatusUpdate> by_queue;
  for (const auto& u : sink.queues) by_queue.emplace(u.queue, u);
  CHECK(by_queue.size() == sink.queues.size());
  CHECK(by_queue.count("same") == 0);
  CHECK(by_queue.count("unreported") == 0);
  REQUIRE(by_queue.count("fresh") == 1);
  REQUIRE(by_queue.at("fresh").deserved.has_value());
  CHECK(*by_queue.at("fresh").deserved == four_gpus);
  CHECK_FALSE(by_queue.at("fresh").guarantee.has_value());  // empty, as the API shows
  REQUIRE(by_queue.count("moved") == 1);
  REQUIRE(by_queue.at("moved").deserved.has_value());
  CHECK(*by_queue.at("moved").deserved == four_gpus);
  CHECK_FALSE(by_queue.at("moved").guarantee.has_value());
  CHECK(by_queue.at("moved").allocated.IsEmpty());
}

}  // namespace
}  // namespace basalt::sched

namespace basalt::sched {
namespace {

TEST_CASE("Statement: Evict releases a running task, Discard restores it, Commit evicts",
          "[sched][statement]") {
  ClusterInfo c;
  (void)c.AddQueue(testing::MakeQueue("default"));
  (void)c.AddNode(testing::MakeNode("n1").Allocatable("nvidia.com/gpu", 4));
  (void)c.AddJob(testing::MakeJob("ns", "victim"));
  (void)c.AddTask(testing::MakeTask("v")
                      .Job("ns/victim")
                      .Request("nvidia.com/gpu", 3)
                      .Node("n1")
                      .Status(TaskStatus::kRunning));
  PluginRegistry registry;
  SchedulerConfig config;
  testing::RecordingEvictor evictor;
  auto opened =
      Session::Open(std::move(c), config, registry, SessionOptions{"s", {}, nullptr, &evictor});
  REQUIRE(opened.ok());
  Session& ssn = **opened;
  NodeInfo* n1 = ssn.FindNode("n1");
  TaskInfo* v = ssn.FindJob("ns/victim")->FindTask("uid-v");
  {
    Statement stmt(&ssn);
    REQUIRE(stmt.Evict(v, "preempt").ok());
    CHECK(v->status == TaskStatus::kReleasing);
    CHECK(n1->releasing().Get("nvidia.com/gpu") == 3000);
    CHECK(n1->FutureIdle().Get("nvidia.com/gpu") == 4000);
    CHECK(ssn.FindJob("ns/victim")->allocated().IsEmpty());
    stmt.Discard();
    CHECK(v->status == TaskStatus::kRunning);
    CHECK(n1->releasing().IsEmpty());
    CHECK(n1->FutureIdle().Get("nvidia.com/gpu") == 1000);
    CHECK(evictor.evicted.empty());
  }
  Statement stmt(&ssn);
  REQUIRE(stmt.Evict(v, "preempt").ok());
  CHECK(stmt.Evict(v, "again").code() == absl::StatusCode::kFailedPrecondition);
  stmt.Commit();
  REQUIRE(evictor.evicted.size() == 1);
  CHECK(evictor.evicted[0] == std::make_pair(std::string("uid-v"), std::string("preempt")));
}

}  // namespace
}  // namespace basalt::sched
