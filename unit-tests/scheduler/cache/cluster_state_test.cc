#include "scheduler/cache/cluster_state.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "common/resource/resource_list.h"
#include "common/util/clock.h"
#include "fmt/format.h"
#include "scheduler/cache/convert.h"

namespace basalt::sched::cache {
namespace {

resource::ResourceList Gpus(int cpu, int gpus) {
  resource::ResourceList l;
  l.Set("cpu", resource::Quantity::FromInt(cpu));
  if (gpus > 0) l.Set("nvidia.com/gpu", resource::Quantity::FromInt(gpus));
  return l;
}

class PodBuilder {
 public:
  explicit PodBuilder(std::string name) {
    p_.pod.namespace_name = "ns";
    p_.pod.name = name;
    p_.pod.uid = "uid-" + name;
    p_.pod.scheduler_name = "volcano";
    p_.pod.request = Gpus(1, 1);
  }
  PodBuilder& Group(std::string g) {
    p_.pod.group_name = std::move(g);
    return *this;
  }
  PodBuilder& Owner(std::string uid) {
    p_.pod.owner_uid = std::move(uid);
    return *this;
  }
  PodBuilder& Node(std::string n) {
    p_.pod.node_name = std::move(n);
    return *this;
  }
  PodBuilder& Scheduler(std::string s) {
    p_.pod.scheduler_name = std::move(s);
    return *this;
  }
  PodBuilder& Phase(api::PodPhase phase) {
    p_.pod.phase = phase;
    return *this;
  }
  PodBuilder& Terminating() {
    p_.pod.terminating = true;
    return *this;
  }
  PodBuilder& QueueAnnotation(std::string q) {
    p_.queue_annotation = std::move(q);
    return *this;
  }
  PodBuilder& MinMember() {
    p_.has_min_member = true;
    return *this;
  }
  PodBuilder& PriorityClass(std::string pc) {
    p_.pod.priority_class_name = std::move(pc);
    return *this;
  }
  PodBuilder& Condition(std::string reason, std::string message) {
    p_.scheduled_condition = PodScheduledCondition{std::move(reason), std::move(message), ""};
    return *this;
  }
  std::shared_ptr<const CachedPod> Build() const { return std::make_shared<CachedPod>(p_); }
  const api::CompactPod& pod() const { return p_.pod; }

 private:
  CachedPod p_;
};

std::shared_ptr<const api::CompactNode> MakeNode(std::string name, int gpus) {
  auto n = std::make_shared<api::CompactNode>();
  n->name = std::move(name);
  n->allocatable = Gpus(32, gpus);
  n->allocatable.Set("pods", resource::Quantity::FromInt(110));
  n->ready = true;
  return n;
}

std::shared_ptr<const api::PodGroup> MakePodGroup(std::string name, int min_member,
                                                  std::string owner_uid = "",
                                                  std::string phase = "") {
  std::string owner;
  if (!owner_uid.empty()) {
    owner = fmt::format(
        R"(,"ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",)"
        R"("name":"{}","uid":"{}","controller":true}}])",
        name, owner_uid);
  }
  std::string status = phase.empty() ? "" : fmt::format(R"(,"status":{{"phase":"{}"}})", phase);
  std::string json =
      fmt::format(R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
                  R"({{"name":"{}","namespace":"ns","uid":"pg-{}"{}}},"spec":{{"minMember":{},)"
                  R"("queue":"q"}}{}}})",
                  name, name, owner, min_member, status);
  absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(json);
  REQUIRE(pg.ok());
  return std::make_shared<api::PodGroup>(*std::move(pg));
}

api::Queue MakeQueue(std::string name) {
  absl::StatusOr<api::Queue> q = api::Queue::Parse(fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{{"name":"{}"}},)"
      R"("spec":{{"weight":2}}}})",
      name));
  REQUIRE(q.ok());
  return *std::move(q);
}

int64_t IdleGpus(const ClusterInfo& c, const std::string& node) {
  auto it = c.nodes().find(node);
  REQUIRE(it != c.nodes().end());
  return it->second.idle().Get("nvidia.com/gpu") / 1000;
}

TEST_CASE(
    "ClusterState: bound pods of any scheduler use node capacity, others' pending pods are "
    "ignored",
    "[sched][cache]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertPod(PodBuilder("foreign").Scheduler("default-scheduler").Node("n1").Build());
  state.UpsertPod(PodBuilder("other-pending").Scheduler("default-scheduler").Build());
  state.UpsertPod(PodBuilder("mine").Owner("rs-1").Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(IdleGpus(s.cluster, "n1") == 7);
  CHECK(s.cluster.foreign_tasks().count("uid-foreign") == 1);
  CHECK(s.cluster.foreign_tasks().count("uid-other-pending") == 0);
  // An owned pod of ours without a PodGroup is kept but never scheduled: no job (a bare pod
  // would get a shadow job, see below).
  CHECK(s.cluster.foreign_tasks().count("uid-mine") == 1);
  CHECK(s.cluster.jobs().empty());
}

TEST_CASE("ClusterState: a pod bound before its node is known is accounted once the node arrives",
          "[sched][cache]") {
  ClusterState state({});
  state.UpsertPod(PodBuilder("early").Scheduler("default-scheduler").Node("n1").Build());
  state.UpsertNode(MakeNode("n1", 8));
  CHECK(IdleGpus(state.TakeSnapshot().cluster, "n1") == 7);
  // A capacity change re-accounts the pods already there.
  state.UpsertNode(MakeNode("n1", 4));
  CHECK(IdleGpus(state.TakeSnapshot().cluster, "n1") == 3);
  state.DeleteNode("n1");
  CHECK(state.TakeSnapshot().cluster.nodes().empty());
}

TEST_CASE(
    "ClusterState: arrivals count new PodGroups and new pods that need a node, timed from the "
    "first one since the last snapshot",
    "[sched][cache]") {
  FakeClock clock;
  ClusterStateOptions options;
  options.clock = &clock;
  ClusterState state(options);
  CHECK(state.arrivals().count == 0);
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertPod(PodBuilder("bound").Scheduler("default-scheduler").Node("n1").Build());
  state.UpsertPod(PodBuilder("other").Scheduler("default-scheduler").Build());  // not ours
  CHECK(state.arrivals().count == 0);  // nodes, bound pods and others' pods are not new work

  const Clock::TimePoint t0 = clock.Now();
  state.UpsertPodGroup(MakePodGroup("a", 1, "job-1"));
  clock.Advance(std::chrono::milliseconds(7));
  state.UpsertPod(PodBuilder("a-0").Group("a").Owner("job-1").Build());
  ClusterState::Arrivals a = state.arrivals();
  CHECK(a.count == 2);
  CHECK(a.first_since_snapshot == t0);
  // Updates of what is known are not arrivals.
  state.UpsertPod(
      PodBuilder("a-0").Group("a").Owner("job-1").Phase(api::PodPhase::kPending).Build());
  state.UpsertPodGroup(MakePodGroup("a", 1, "job-1"));
  CHECK(state.arrivals().count == 2);

  ClusterState::Snapshot snap = state.TakeSnapshot();
  CHECK(snap.arrivals == 2);
  clock.Advance(std::chrono::milliseconds(3));
  state.UpsertPod(PodBuilder("a-1").Group("a").Owner("job-1").Build());
  a = state.arrivals();
  CHECK(a.count == 3);
  CHECK(a.first_since_snapshot == t0 + std::chrono::milliseconds(10));

  // A bare pod arrives, then its group annotation: joining a group is new work too (the
  // PodGroup may have arrived in between, and its cycle found no pod to place).
  state.UpsertPod(PodBuilder("bare").Build());
  CHECK(state.arrivals().count == 4);
  state.UpsertPodGroup(MakePodGroup("podgroup-bare", 1));
  CHECK(state.arrivals().count == 5);
  state.UpsertPod(PodBuilder("bare").Group("podgroup-bare").Build());
  CHECK(state.arrivals().count == 6);
  // Its later updates, and a bound pod's annotation, are not.
  state.UpsertPod(PodBuilder("bare").Group("podgroup-bare").Phase(api::PodPhase::kPending).Build());
  state.UpsertPod(PodBuilder("bound").Scheduler("default-scheduler").Node("n1").Group("g").Build());
  CHECK(state.arrivals().count == 6);
}

TEST_CASE("ClusterState: pods join the PodGroup named by their annotation, whenever it arrives",
          "[sched][cache]") {
  ClusterState state({});
  state.UpsertPod(PodBuilder("a-0").Group("a").Owner("job-1").Build());
  state.UpsertPodGroup(MakePodGroup("a", 2, "job-1"));
  state.UpsertPod(PodBuilder("a-1").Group("a").Owner("job-1").Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  REQUIRE(s.cluster.jobs().count("ns/a") == 1);
  const JobInfo& job = s.cluster.jobs().at("ns/a");
  CHECK(job.tasks().size() == 2);
  CHECK(job.min_available == 2);
  CHECK(job.queue == "q");

  // Deleting the PodGroup makes its pods foreign again.
  state.DeletePodGroup("ns", "a");
  s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().empty());
  CHECK(s.cluster.foreign_tasks().size() == 2);
}

TEST_CASE("ClusterState: pods of an old job never join a new job's gang of the same name",
          "[sched][cache]") {
  ClusterState state({});
  state.UpsertPodGroup(MakePodGroup("train", 2, "job-new"));
  state.UpsertPod(PodBuilder("old-0").Group("train").Owner("job-old").Build());
  state.UpsertPod(PodBuilder("new-0").Group("train").Owner("job-new").Build());
  state.UpsertPod(PodBuilder("unowned").Group("train").Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  const JobInfo& job = s.cluster.jobs().at("ns/train");
  CHECK(job.tasks().count("uid-new-0") == 1);
  CHECK(job.tasks().count("uid-unowned") == 1);  // no owner to compare: joins
  CHECK(job.tasks().count("uid-old-0") == 0);
  CHECK(s.cluster.foreign_tasks().count("uid-old-0") == 1);
}

TEST_CASE(
    "ClusterState: an assumed placement holds the node until the bind is confirmed or "
    "rolled back",
    "[sched][cache]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 2));
  state.UpsertPodGroup(MakePodGroup("a", 1));
  PodBuilder pod = PodBuilder("a-0").Group("a");
  state.UpsertPod(pod.Build());
  const uint64_t before = state.generation();

  REQUIRE(state.Assume(BindRequest{"uid-a-0", "ns", "a-0", "n1"}).ok());
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(IdleGpus(s.cluster, "n1") == 1);
  CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kBinding);
  CHECK(state.generation() == before);  // the decision itself is no news for the next cycle

  SECTION("a failed bind puts the pod back to Pending and frees the node") {
    state.Forget("uid-a-0");
    s = state.TakeSnapshot();
    CHECK(IdleGpus(s.cluster, "n1") == 2);
    CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kPending);
    CHECK(state.generation() > before);
    CHECK(state.assumed_count() == 0);
  }
  SECTION("a pod update still without a node keeps the assumption") {
    state.UpsertPod(pod.Build());
    CHECK(IdleGpus(state.TakeSnapshot().cluster, "n1") == 1);
  }
  SECTION("the informer reporting the pod bound ends the assumption") {
    state.UpsertPod(PodBuilder("a-0").Group("a").Node("n1").Build());
    s = state.TakeSnapshot();
    CHECK(state.assumed_count() == 0);
    CHECK(IdleGpus(s.cluster, "n1") == 1);
    CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kBound);
  }
  SECTION("assuming a bound pod or a missing pod is refused") {
    state.UpsertPod(PodBuilder("a-0").Group("a").Node("n1").Build());
    CHECK(state.Assume(BindRequest{"uid-a-0", "ns", "a-0", "n1"}).code() ==
          absl::StatusCode::kAlreadyExists);
    CHECK(state.Assume(BindRequest{"uid-x", "ns", "x", "n1"}).code() ==
          absl::StatusCode::kNotFound);
  }
}

TEST_CASE("ClusterState: an evicted pod is Releasing until the watch reports it terminating",
          "[sched][cache]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 2));
  state.UpsertPodGroup(MakePodGroup("a", 1));
  PodBuilder running = PodBuilder("a-0").Group("a").Node("n1").Phase(api::PodPhase::kRunning);
  state.UpsertPod(running.Build());
  (void)state.TakeSnapshot();
  state.AssumeEvicted("uid-a-0");
  state.AssumeEvicted("uid-unknown");  // no-op
  CHECK(state.evicting_count() == 1);
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kReleasing);
  SECTION("an update that is not yet the deletion keeps it Releasing") {
    state.UpsertPod(running.Build());
    s = state.TakeSnapshot();
    CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kReleasing);
    CHECK(state.evicting_count() == 1);
  }
  SECTION("the deletion seen ends the assumption") {
    state.UpsertPod(PodBuilder("a-0")
                        .Group("a")
                        .Node("n1")
                        .Phase(api::PodPhase::kRunning)
                        .Terminating()
                        .Build());
    CHECK(state.evicting_count() == 0);
    s = state.TakeSnapshot();
    CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kReleasing);
    state.DeletePod(running.pod());
    CHECK(state.evicting_count() == 0);
  }
  SECTION("a failed delete puts it back to Running") {
    state.ForgetEvicted("uid-a-0");
    s = state.TakeSnapshot();
    CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kRunning);
    CHECK(state.evicting_count() == 0);
  }
}

TEST_CASE("ClusterState: an assumption that no longer fits is refused", "[sched][cache]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 1));
  state.UpsertPod(PodBuilder("foreign").Scheduler("other").Node("n1").Build());
  state.UpsertPodGroup(MakePodGroup("a", 1));
  state.UpsertPod(PodBuilder("a-0").Group("a").Build());
  CHECK(state.Assume(BindRequest{"uid-a-0", "ns", "a-0", "n1"}).code() ==
        absl::StatusCode::kFailedPrecondition);
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").status == TaskStatus::kPending);
  CHECK(IdleGpus(s.cluster, "n1") == 0);
}

TEST_CASE("ClusterState: terminated pods count for their job but not on their node",
          "[sched][cache]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 2));
  state.UpsertPodGroup(MakePodGroup("a", 1));
  state.UpsertPod(PodBuilder("a-0").Group("a").Node("n1").Phase(api::PodPhase::kSucceeded).Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(IdleGpus(s.cluster, "n1") == 2);
  CHECK(s.cluster.jobs().at("ns/a").TaskCount(TaskStatus::kSucceeded) == 1);
}

TEST_CASE("ClusterState: written status stays in force until the watch reports it",
          "[sched][cache]") {
  ClusterState state({});
  state.UpsertPodGroup(MakePodGroup("a", 1));
  state.UpsertPod(PodBuilder("a-0").Group("a").Build());
  state.UpsertQueue(MakeQueue("q"));

  PodGroupStatus inqueue;
  inqueue.phase = PodGroupPhase::kInqueue;
  state.SetPodGroupStatus("ns/a", inqueue);
  state.SetPodCondition("uid-a-0", PodScheduledCondition{"Unschedulable", "no room", ""});
  Resource allocated;
  allocated.SetUnits("nvidia.com/gpu", 2);
  state.SetQueueAllocated("q", allocated);

  // A stale watch event (status not written yet) does not undo what was written.
  state.UpsertPodGroup(MakePodGroup("a", 1));
  state.UpsertPod(PodBuilder("a-0").Group("a").Build());
  state.UpsertQueue(MakeQueue("q"));
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/a").podgroup_status.phase == PodGroupPhase::kInqueue);
  const TaskInfo& t = s.cluster.jobs().at("ns/a").tasks().at("uid-a-0");
  REQUIRE(t.scheduled_condition.has_value());
  CHECK(t.scheduled_condition->message == "no room");
  CHECK(s.cluster.queues().at("q").status_allocated == allocated);

  SECTION("a failed write is forgotten: the API's state is used again") {
    state.ForgetPodGroupStatus("ns/a");
    state.ForgetPodCondition("uid-a-0");
    state.ForgetQueueAllocated("q");
    s = state.TakeSnapshot();
    CHECK(s.cluster.jobs().at("ns/a").podgroup_status.phase == PodGroupPhase::kPending);
    CHECK_FALSE(s.cluster.jobs().at("ns/a").tasks().at("uid-a-0").scheduled_condition);
    CHECK(s.cluster.queues().at("q").status_allocated == Resource());
  }
  SECTION("the watch catching up takes over") {
    state.UpsertPodGroup(MakePodGroup("a", 1, "", "Inqueue"));
    state.UpsertPod(PodBuilder("a-0").Group("a").Condition("Unschedulable", "no room").Build());
    state.ForgetPodGroupStatus("ns/a");  // nothing written any more: API state is the same
    s = state.TakeSnapshot();
    CHECK(s.cluster.jobs().at("ns/a").podgroup_status.phase == PodGroupPhase::kInqueue);
  }
}

TEST_CASE(
    "ClusterState: job priority comes from the PodGroup's PriorityClass or the global "
    "default",
    "[sched][cache]") {
  ClusterState state({});
  state.UpsertPodGroup(MakePodGroup("a", 1));
  CHECK(state.TakeSnapshot().cluster.jobs().at("ns/a").priority == 0);
  state.UpsertPriorityClass("low", 10, true);
  CHECK(state.TakeSnapshot().cluster.jobs().at("ns/a").priority == 10);
}

TEST_CASE("ClusterState: WaitForChange wakes on a change and times out without one",
          "[sched][cache]") {
  FakeClock clock;
  ClusterStateOptions options;
  options.clock = &clock;
  ClusterState state(options);
  std::stop_source stop;
  const uint64_t g = state.generation();
  // The timeout passes on the clock: advanced once the wait has armed its timer.
  bool armed = false;
  std::thread advance([&] {
    armed = clock.WaitForTimers(1);
    clock.Advance(std::chrono::milliseconds(1));
  });
  CHECK_FALSE(state.WaitForChange(g, std::chrono::milliseconds(1), stop.get_token()));
  advance.join();
  CHECK(armed);
  state.UpsertNode(MakeNode("n1", 1));
  CHECK(state.WaitForChange(g, std::chrono::milliseconds(1), stop.get_token()));
}

TEST_CASE("ClusterState: a change or a stop request wakes WaitForChange before its timeout",
          "[sched][cache]") {
  FakeClock clock;
  ClusterStateOptions options;
  options.clock = &clock;
  ClusterState state(options);
  std::stop_source stop;
  const uint64_t g = state.generation();
  bool changed = false;
  std::thread waiter(
      [&] { changed = state.WaitForChange(g, std::chrono::hours(1), stop.get_token()); });
  REQUIRE(clock.WaitForTimers(1));
  state.UpsertNode(MakeNode("n1", 1));  // no Advance: the change alone wakes it
  waiter.join();
  CHECK(changed);

  const uint64_t g2 = state.generation();
  bool changed2 = true;
  std::thread stopped(
      [&] { changed2 = state.WaitForChange(g2, std::chrono::hours(1), stop.get_token()); });
  REQUIRE(clock.WaitForTimers(1));
  stop.request_stop();  // no Advance, no change: the stop request alone wakes it
  stopped.join();
  CHECK_FALSE(changed2);
}

TEST_CASE("convert: node affinity, terminated pods and the queue allocated patch",
          "[sched][cache]") {
  absl::StatusOr<NodeAffinity> a = ParseNodeAffinity(
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)"
      R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"In","values":["A100"]}]}]},)"
      R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"preference":)"
      R"({"matchExpressions":[{"key":"rack","operator":"Exists"}]}}]}})");
  REQUIRE(a.ok());
  REQUIRE(a->required.has_value());
  CHECK(a->required->at(0).Matches("n1", {{"nvidia.com/gpu.product", "A100"}}));
  CHECK_FALSE(a->required->at(0).Matches("n1", {{"nvidia.com/gpu.product", "T4"}}));
  CHECK(a->preferred.at(0).weight == 5);
  CHECK_FALSE(
      ParseNodeAffinity(
          R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
          R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Near"}]}]}}})")
          .ok());

  Resource before;
  before.SetUnits("nvidia.com/gpu", 4);
  CHECK(QueueAllocatedPatch(Resource(), before) ==
        R"({"status":{"allocated":{"cpu":"0","memory":"0","nvidia.com/gpu":"0"}}})");

  // deserved and guarantee are written only when the update sets them.
  Resource six;
  six.SetUnits("nvidia.com/gpu", 6);
  QueueStatusUpdate update{"q", Resource()};
  update.deserved = six;
  Resource old_deserved;
  old_deserved.SetUnits("example.com/fpga", 1);
  CHECK(QueueStatusPatch(update, Resource(), old_deserved, before) ==
        R"({"status":{"allocated":{"cpu":"0","memory":"0"},)"
        R"("deserved":{"cpu":"0","example.com/fpga":"0","memory":"0","nvidia.com/gpu":"6"}}})");
  update.deserved.reset();
  update.guarantee = Resource();
  CHECK(QueueStatusPatch(update, Resource(), Resource(), before) ==
        R"({"status":{"allocated":{"cpu":"0","memory":"0"},)"
        R"("guarantee":{"cpu":"0","memory":"0","nvidia.com/gpu":"0"}}})");
}

}  // namespace
}  // namespace basalt::sched::cache

TEST_CASE("ToResource: quota-style minResources keys are not node resources", "[sched][cache]") {
  auto list = basalt::resource::ResourceList::FromStrings({{"count/pods", "4"},
                                                           {"pods", "4"},
                                                           {"cpu", "32"},
                                                           {"requests.cpu", "32"},
                                                           {"limits.cpu", "32"},
                                                           {"memory", "256Gi"},
                                                           {"limits.memory", "256Gi"},
                                                           {"nvidia.com/gpu", "4"},
                                                           {"requests.nvidia.com/gpu", "4"}});
  REQUIRE(list.ok());
  basalt::sched::Resource r = basalt::sched::cache::ToResource(*list);
  CHECK(r.milli_cpu() == 32000);
  CHECK(r.memory() == 256LL * 1024 * 1024 * 1024);
  CHECK(r.scalars().size() == 1);
  CHECK(r.Get("nvidia.com/gpu") == 4000);
  CHECK_FALSE(basalt::sched::cache::IsSchedulableResourceName("count/pods"));
  CHECK(basalt::sched::cache::IsSchedulableResourceName("hugepages-2Mi"));
}

namespace basalt::sched::cache {
namespace {

api::HyperNode MakeHyperNode(const std::string& name, int tier, const std::string& member) {
  absl::StatusOr<api::HyperNode> hn = api::HyperNode::Parse(fmt::format(
      R"({{"kind":"HyperNode","metadata":{{"name":"{}"}},"spec":{{"tier":{},"members":[
          {{"type":"Node","selector":{{"exactMatch":{{"name":"{}"}}}}}}]}}}})",
      name, tier, member));
  REQUIRE(hn.ok());
  return *std::move(hn);
}

TEST_CASE("ClusterState: HyperNodes reach every snapshot, and a PodGroup's networkTopology",
          "[sched][cache][topology]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertHyperNode(MakeHyperNode("s0", 1, "n1"));
  ClusterState::Snapshot s = state.TakeSnapshot();
  REQUIRE(s.cluster.hypernodes().count("s0") == 1);
  CHECK(s.cluster.hypernodes().at("s0").tier == 1);
  CHECK(s.cluster.hypernodes().at("s0").members.at(0).exact_name == "n1");
  const uint64_t gen = state.generation();
  state.UpsertHyperNode(MakeHyperNode("s0", 1, "n1"));  // unchanged: no new generation
  CHECK(state.generation() == gen);
  state.ReturnSnapshot(std::move(s.cluster), s.handout);
  state.UpsertHyperNode(MakeHyperNode("s0", 2, "n1"));
  s = state.TakeSnapshot();
  CHECK(s.cluster.hypernodes().at("s0").tier == 2);
  state.DeleteHyperNode("s0");
  CHECK(state.TakeFullSnapshot().cluster.hypernodes().empty());

  absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(
      R"({"kind":"PodGroup","metadata":{"name":"a","namespace":"ns"},
          "spec":{"minMember":1,"networkTopology":{"mode":"soft","highestTierAllowed":2}}})");
  REQUIRE(pg.ok());
  JobInfo job = ToJobInfo(*pg, "default");
  REQUIRE(job.network_topology.has_value());
  CHECK_FALSE(job.network_topology->hard);
  CHECK(job.network_topology->highest_tier == 2);
}

}  // namespace
TEST_CASE(
    "ClusterState: a PodGroup owned by a pod or a workload controller is marked as made for "
    "pods that precede it, a vcjob's or a hand-made one is not",
    "[sched][cache]") {
  auto with_owner = [](std::string name, std::string api_version, std::string kind) {
    std::string owner = kind.empty()
                            ? ""
                            : fmt::format(R"(,"ownerReferences":[{{"apiVersion":"{}","kind":"{}",)"
                                          R"("name":"o","uid":"o-{}","controller":true}}])",
                                          api_version, kind, name);
    absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(fmt::format(
        R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
        R"({{"name":"{}","namespace":"ns","uid":"pg-{}"{}}},"spec":{{"minMember":1}}}})",
        name, name, owner));
    REQUIRE(pg.ok());
    return std::make_shared<api::PodGroup>(*std::move(pg));
  };
  ClusterState state({});
  state.UpsertPodGroup(with_owner("bare", "v1", "Pod"));
  state.UpsertPodGroup(with_owner("rs", "apps/v1", "ReplicaSet"));
  state.UpsertPodGroup(with_owner("batch", "batch/v1", "Job"));
  state.UpsertPodGroup(with_owner("vcjob", "batch.volcano.sh/v1alpha1", "Job"));
  state.UpsertPodGroup(with_owner("manual", "", ""));
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/bare").pods_precede_group);
  CHECK(s.cluster.jobs().at("ns/rs").pods_precede_group);
  CHECK(s.cluster.jobs().at("ns/batch").pods_precede_group);
  CHECK_FALSE(s.cluster.jobs().at("ns/vcjob").pods_precede_group);
  CHECK_FALSE(s.cluster.jobs().at("ns/manual").pods_precede_group);
  // A clone (the snapshot's reuse) keeps it.
  CHECK(s.cluster.jobs().at("ns/bare").Clone().pods_precede_group);
}

}  // namespace basalt::sched::cache

namespace basalt::sched::cache {
namespace {

TEST_CASE("ClusterState: a bare pod of ours is the task of a shadow job kept only in the cache",
          "[sched][cache][shadow]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertQueue(MakeQueue("default"));
  state.UpsertPriorityClass("high", 1000, false);
  state.UpsertPod(PodBuilder("bare").PriorityClass("high").Build());
  state.UpsertPod(PodBuilder("queued").QueueAnnotation("q").Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  REQUIRE(s.cluster.jobs().count("ns/podgroup-uid-bare") == 1);
  const JobInfo& job = s.cluster.jobs().at("ns/podgroup-uid-bare");
  CHECK(job.shadow);
  CHECK(job.name == "podgroup-uid-bare");
  CHECK(job.namespace_name == "ns");
  CHECK(job.min_available == 1);
  CHECK(job.queue == "default");
  CHECK(job.priority == 1000);
  CHECK(job.min_resources->Get("nvidia.com/gpu") == 1000);
  CHECK(job.podgroup_status.phase == PodGroupPhase::kPending);
  REQUIRE(job.tasks().count("uid-bare") == 1);
  CHECK(job.tasks().at("uid-bare").job_id == "ns/podgroup-uid-bare");
  CHECK(s.cluster.foreign_tasks().empty());
  // The queue comes from the pod's scheduling.volcano.sh/queue-name annotation.
  REQUIRE(s.cluster.jobs().count("ns/podgroup-uid-queued") == 1);
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-queued").queue == "q");

  // Deleted with its pod.
  state.DeletePod(PodBuilder("bare").pod());
  s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().count("ns/podgroup-uid-bare") == 0);
  CHECK(s.cluster.jobs().size() == 1);
  // Also when the pod terminates (Succeeded): it is foreign, without a node.
  state.UpsertPod(
      PodBuilder("queued").QueueAnnotation("q").Phase(api::PodPhase::kSucceeded).Build());
  s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().empty());
  CHECK(s.cluster.foreign_tasks().count("uid-queued") == 1);
}

TEST_CASE("ClusterState: owned pods, pods declaring a gang and others' pods get no shadow job",
          "[sched][cache][shadow]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertPod(PodBuilder("owned").Owner("rs-1").Build());
  state.UpsertPod(PodBuilder("gang").MinMember().Build());
  state.UpsertPod(PodBuilder("other").Group("some-group").Build());
  state.UpsertPod(PodBuilder("theirs").Scheduler("default-scheduler").Node("n1").Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().empty());
  CHECK(s.cluster.foreign_tasks().count("uid-owned") == 1);
  CHECK(s.cluster.foreign_tasks().count("uid-gang") == 1);
  CHECK(s.cluster.foreign_tasks().count("uid-other") == 1);
  CHECK(s.cluster.foreign_tasks().count("uid-theirs") == 1);
}

TEST_CASE(
    "ClusterState: a shadow task moves into the real PodGroup when it appears, keeping its "
    "assumed node, and back when the PodGroup goes",
    "[sched][cache][shadow]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertPod(PodBuilder("bare").Build());
  REQUIRE(state.TakeSnapshot().cluster.jobs().at("ns/podgroup-uid-bare").shadow);
  REQUIRE(state.Assume(BindRequest{"uid-bare", "ns", "bare", "n1"}).ok());
  CHECK(state.assumed_count() == 1);
  // Placed: Running, as the session would compute it (no status is written back).
  CHECK(state.TakeSnapshot().cluster.jobs().at("ns/podgroup-uid-bare").podgroup_status.phase ==
        PodGroupPhase::kRunning);

  // The controller's PodGroup arrives before the pod's annotation.
  state.UpsertPodGroup(MakePodGroup("podgroup-uid-bare", 1));
  ClusterState::Snapshot s = state.TakeSnapshot();
  REQUIRE(s.cluster.jobs().size() == 1);
  const JobInfo& real = s.cluster.jobs().at("ns/podgroup-uid-bare");
  CHECK_FALSE(real.shadow);
  CHECK(real.queue == "q");  // the PodGroup's spec now
  REQUIRE(real.tasks().count("uid-bare") == 1);
  CHECK(real.tasks().at("uid-bare").status == TaskStatus::kBinding);
  CHECK(real.tasks().at("uid-bare").node_name == "n1");
  CHECK(IdleGpus(s.cluster, "n1") == 7);  // placed once
  CHECK(state.assumed_count() == 1);

  // Then the annotation, then the bind seen back: the same job throughout.
  state.UpsertPod(PodBuilder("bare").Group("podgroup-uid-bare").Build());
  s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-bare").tasks().at("uid-bare").status ==
        TaskStatus::kBinding);
  state.UpsertPod(PodBuilder("bare").Group("podgroup-uid-bare").Node("n1").Build());
  s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-bare").tasks().at("uid-bare").status ==
        TaskStatus::kBound);
  CHECK(state.assumed_count() == 0);
  CHECK(IdleGpus(s.cluster, "n1") == 7);

  // The PodGroup deleted while the pod lives: the pod is in a shadow job again, on its node.
  state.DeletePodGroup("ns", "podgroup-uid-bare");
  s = state.TakeSnapshot();
  REQUIRE(s.cluster.jobs().count("ns/podgroup-uid-bare") == 1);
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-bare").shadow);
  CHECK(IdleGpus(s.cluster, "n1") == 7);
}

TEST_CASE("ClusterState: the pod's annotation before the PodGroup keeps the shadow job",
          "[sched][cache][shadow]") {
  ClusterState state({});
  state.UpsertNode(MakeNode("n1", 8));
  state.UpsertPod(PodBuilder("bare").Build());
  REQUIRE(state.Assume(BindRequest{"uid-bare", "ns", "bare", "n1"}).ok());
  state.UpsertPod(PodBuilder("bare").Group("podgroup-uid-bare").Build());
  ClusterState::Snapshot s = state.TakeSnapshot();
  REQUIRE(s.cluster.jobs().count("ns/podgroup-uid-bare") == 1);
  const JobInfo& job = s.cluster.jobs().at("ns/podgroup-uid-bare");
  CHECK(job.shadow);
  CHECK(job.tasks().at("uid-bare").status == TaskStatus::kBinding);
  CHECK(job.tasks().at("uid-bare").node_name == "n1");
  // A failed bind rolls the assumption back: pending in its shadow job again.
  state.Forget("uid-bare");
  s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-bare").tasks().at("uid-bare").status ==
        TaskStatus::kPending);
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-bare").podgroup_status.phase ==
        PodGroupPhase::kPending);
  CHECK(IdleGpus(s.cluster, "n1") == 8);
  state.UpsertPodGroup(MakePodGroup("podgroup-uid-bare", 1));
  s = state.TakeSnapshot();
  CHECK_FALSE(s.cluster.jobs().at("ns/podgroup-uid-bare").shadow);
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-bare").tasks().size() == 1);
}

TEST_CASE("ClusterState: incremental snapshots of shadow jobs equal complete copies",
          "[sched][cache][shadow]") {
  ClusterStateOptions options;
  options.verify_snapshots = true;
  ClusterState state(options);
  state.UpsertNode(MakeNode("n1", 8));
  for (int round = 0; round < 3; ++round) {
    state.UpsertPod(PodBuilder(fmt::format("p{}", round)).Build());
    ClusterState::Snapshot s = state.TakeSnapshot();
    ClusterState::Snapshot full = state.TakeFullSnapshot();
    CHECK(s.cluster.jobs().size() == full.cluster.jobs().size());
    state.ReturnSnapshot(std::move(s.cluster), s.handout);
  }
  state.UpsertPodGroup(MakePodGroup("podgroup-uid-p1", 1));
  state.DeletePod(PodBuilder("p0").pod());
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(s.cluster.jobs().size() == 2);
  CHECK_FALSE(s.cluster.jobs().at("ns/podgroup-uid-p1").shadow);
  CHECK(s.cluster.jobs().at("ns/podgroup-uid-p2").shadow);
  CHECK(state.snapshot_stats().verified >= 3);
  CHECK(state.snapshot_stats().diverged == 0);
}

}  // namespace
}  // namespace basalt::sched::cache
