// Incremental snapshots (ClusterState::TakeSnapshot after ReturnSnapshot) must equal a complete
// copy of the cache (TakeFullSnapshot) after any sequence of informer events, binds, status
// writes and whole scheduling cycles — including cycles that pipeline, bind and evict.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/api/compact.h"
#include "common/resource/resource_list.h"
#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/convert.h"
#include "scheduler/cache/snapshotter.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"

namespace basalt::sched::cache {
namespace {

resource::ResourceList Req(int milli_cpu, int gpus) {
  resource::ResourceList l;
  l.Set("cpu", resource::Quantity::FromMilli(milli_cpu));
  if (gpus > 0) l.Set("nvidia.com/gpu", resource::Quantity::FromInt(gpus));
  return l;
}

std::shared_ptr<const api::CompactNode> Node(const std::string& name, int gpus, bool cordoned) {
  auto n = std::make_shared<api::CompactNode>();
  n->name = name;
  n->uid = name;
  n->allocatable = Req(8000, gpus);
  n->allocatable.Set("pods", resource::Quantity::FromInt(20));
  n->capacity = n->allocatable;
  n->labels = {{"kubernetes.io/hostname", name}};
  n->unschedulable = cordoned;
  n->ready = true;
  return n;
}

std::shared_ptr<const api::PodGroup> Group(const std::string& name, int min_member,
                                           const std::string& uid, const std::string& phase) {
  std::string json = fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({{"name":"{}","namespace":"ns","uid":"{}","creationTimestamp":"2026-11-29T10:00:00Z"}},)"
      R"("spec":{{"minMember":{},"queue":"{}"}},"status":{{"phase":"{}"}}}})",
      name, uid, min_member, name == "g0" ? "q1" : "q0", phase);
  absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(json);
  REQUIRE(pg.ok());
  return std::make_shared<api::PodGroup>(*std::move(pg));
}

api::Queue Queue(const std::string& name, int weight) {
  absl::StatusOr<api::Queue> q = api::Queue::Parse(fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{{"name":"{}"}},)"
      R"("spec":{{"weight":{},"reclaimable":true}},"status":{{"state":"Open"}}}})",
      name, weight));
  REQUIRE(q.ok());
  return *std::move(q);
}

// A canonical description of everything a session can read, with each node's task pointers
// checked to point into the same snapshot.
std::string Describe(ClusterInfo& c) {
  std::string out;
  for (auto& [id, job] : c.jobs()) {
    out += fmt::format("job {} q={} min={} prio={} phase={} run={} alloc={} total={} fit={}/{}\n",
                       id, job.queue, job.min_available, job.priority,
                       PodGroupPhaseName(job.podgroup_status.phase), job.podgroup_status.running,
                       job.allocated().ToString(), job.total_request().ToString(),
                       job.nodes_fit_errors.size(), job.job_fit_errors);
    for (TaskStatus s : kAllTaskStatuses) {
      out += fmt::format(" {}={}", TaskStatusName(s), job.TaskCount(s));
    }
    out += "\n";
    for (const auto& [uid, t] : job.tasks()) {
      out += fmt::format("  task {} {} node={} req={} cond={}\n", uid, TaskStatusName(t.status),
                         t.node_name, t.resreq.ToString(),
                         t.scheduled_condition.has_value() ? t.scheduled_condition->reason : "-");
    }
  }
  for (const auto& [uid, t] : c.foreign_tasks()) {
    out += fmt::format("foreign {} {} node={}\n", uid, TaskStatusName(t.status), t.node_name);
  }
  for (auto& [name, node] : c.nodes()) {
    out += fmt::format("node {} idle={} used={} rel={} pipe={} future={} pods={} unsched={}\n",
                       name, node.idle().ToString(), node.used().ToString(),
                       node.releasing().ToString(), node.pipelined().ToString(),
                       node.FutureIdle().ToString(), node.pod_count(), node.unschedulable());
    for (const auto& [uid, t] : node.tasks()) {
      const TaskInfo* owned = nullptr;
      if (JobInfo* j = c.FindJob(t->job_id); j != nullptr) owned = j->FindTask(uid);
      if (owned == nullptr) {
        auto f = c.foreign_tasks().find(uid);
        if (f != c.foreign_tasks().end()) owned = &f->second;
      }
      out += fmt::format("  on {} {} {}\n", uid, TaskStatusName(t->status),
                         owned == t ? "owned" : "FOREIGN-POINTER");
    }
  }
  for (const auto& [name, q] : c.queues()) {
    out +=
        fmt::format("queue {} w={} allocated={}\n", name, q.weight, q.status_allocated.ToString());
  }
  return out;
}

std::string Describe(ClusterInfo&& c) { return Describe(c); }

// Binds like the real binder would: assume, then (most of the time) the informer confirms.
class ConfirmingBinder final : public Binder {
 public:
  ConfirmingBinder(ClusterState* state, std::map<std::string, std::shared_ptr<CachedPod>>* pods,
                   std::mt19937* rng)
      : state_(state), pods_(pods), rng_(rng) {}
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    for (const BindRequest& r : requests) {
      if (!state_->Assume(r).ok()) continue;
      if ((*rng_)() % 4 == 0) {
        state_->Forget(r.task_uid);  // the bind failed
        continue;
      }
      if ((*rng_)() % 3 == 0) continue;  // still in flight at the next snapshot
      auto& p = (*pods_)[r.task_uid];
      auto bound = std::make_shared<CachedPod>(*p);
      bound->pod.node_name = r.node_name;
      bound->pod.phase = api::PodPhase::kRunning;
      p = bound;
      state_->UpsertPod(bound);
    }
  }

 private:
  ClusterState* state_;
  std::map<std::string, std::shared_ptr<CachedPod>>* pods_;
  std::mt19937* rng_;
};

class NullEvictor final : public Evictor {
 public:
  void Evict(const TaskInfo&, const EvictionCause&) override { ++evictions; }
  int evictions = 0;
};

class ApplyingSink final : public StatusSink {
 public:
  explicit ApplyingSink(ClusterState* state) : state_(state) {}
  void UpdatePodGroupStatus(PodGroupStatusUpdate u) override {
    state_->SetPodGroupStatus(u.job_id, u.status);
  }
  void UpdatePodCondition(PodConditionUpdate u) override {
    state_->SetPodCondition(u.task_uid, u.condition);
  }
  void UpdateQueueStatus(QueueStatusUpdate u) override {
    state_->SetQueueAllocated(u.queue, u.allocated);
  }
  void RecordEvent(EventRecord) override {}

 private:
  ClusterState* state_;
};

TEST_CASE(
    "ClusterState: incremental snapshots equal complete copies through random events and "
    "cycles that allocate, pipeline, bind and evict",
    "[sched][cache][snapshot]") {
  const unsigned seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  std::mt19937 rng(seed);
  ClusterStateOptions options;
  options.full_snapshot_every = 1000;  // never, within the test: every snapshot is incremental
  options.verify_snapshots = true;     // and each one's content is checked against a full copy
  ClusterState state(options);
  std::map<std::string, std::shared_ptr<CachedPod>> pods;

  auto plugins = NewInTreeRegistry();
  auto actions = NewInTreeActionRegistry();
  absl::StatusOr<SchedulerConfig> config = LoadSchedulerConfig(
      R"(actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
)",
      plugins, actions);
  REQUIRE(config.ok());
  ConfirmingBinder binder(&state, &pods, &rng);
  NullEvictor evictor;
  ApplyingSink sink(&state);
  CycleDeps deps{&plugins, &actions, &binder, &evictor, &sink};

  state.UpsertQueue(Queue("q0", 1));
  state.UpsertQueue(Queue("q1", 3));
  for (int n = 0; n < 4; ++n) state.UpsertNode(Node(fmt::format("n{}", n), 4, false));
  int next_pod = 0;
  int next_group_uid = 0;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto random_pod = [&]() -> std::shared_ptr<CachedPod>* {
    if (pods.empty()) return nullptr;
    auto it = pods.begin();
    std::advance(it, pick(static_cast<int>(pods.size())));
    return &it->second;
  };

  uint64_t incremental = 0;
  for (int step = 0; step < 250; ++step) {
    switch (pick(12)) {
      case 0:
      case 1: {  // a pending pod of ours, in one of 4 groups (or none)
        auto p = std::make_shared<CachedPod>();
        p->pod.namespace_name = "ns";
        p->pod.name = fmt::format("p{}", next_pod++);
        p->pod.uid = "uid-" + p->pod.name;
        p->pod.scheduler_name = "volcano";
        const int g = pick(5);
        if (g < 4) p->pod.group_name = fmt::format("g{}", g);
        p->pod.request = Req(500 * (1 + pick(3)), pick(3));
        p->pod.priority = pick(2) * 100;
        pods[p->pod.uid] = p;
        state.UpsertPod(p);
        break;
      }
      case 2: {  // a pod bound by someone else
        auto p = std::make_shared<CachedPod>();
        p->pod.namespace_name = "other";
        p->pod.name = fmt::format("x{}", next_pod++);
        p->pod.uid = "uid-" + p->pod.name;
        p->pod.scheduler_name = "default-scheduler";
        p->pod.node_name = fmt::format("n{}", pick(5));  // n4 may not exist yet
        p->pod.phase = api::PodPhase::kRunning;
        p->pod.request = Req(1000, pick(2));
        pods[p->pod.uid] = p;
        state.UpsertPod(p);
        break;
      }
      case 3: {  // a pod finishes or is deleted
        auto* p = random_pod();
        if (p == nullptr) break;
        if (pick(2) == 0) {
          auto done = std::make_shared<CachedPod>(**p);
          done->pod.phase = pick(2) == 0 ? api::PodPhase::kSucceeded : api::PodPhase::kFailed;
          *p = done;
          state.UpsertPod(done);
        } else {
          api::CompactPod gone = (*p)->pod;
          pods.erase(gone.uid);
          state.DeletePod(gone);
        }
        break;
      }
      case 4: {  // PodGroups appear, change, are recreated or deleted
        const std::string name = fmt::format("g{}", pick(4));
        const int what = pick(4);
        if (what == 3) {
          state.DeletePodGroup("ns", name);
        } else {
          if (what == 2) ++next_group_uid;  // recreated: new uid
          state.UpsertPodGroup(Group(name, 1 + pick(3), fmt::format("{}-{}", name, next_group_uid),
                                     pick(2) == 0 ? "Pending" : "Inqueue"));
        }
        break;
      }
      case 5: {  // nodes resize, cordon, join and leave
        const std::string name = fmt::format("n{}", pick(5));
        if (pick(4) == 0) {
          state.DeleteNode(name);
        } else {
          state.UpsertNode(Node(name, 2 + 2 * pick(3), pick(4) == 0));
        }
        break;
      }
      case 6: {  // a status write lands or is forgotten
        auto* p = random_pod();
        if (p == nullptr) break;
        if (pick(2) == 0) {
          state.SetPodCondition((*p)->pod.uid, PodScheduledCondition{"Unschedulable", "x", ""});
        } else {
          state.ForgetPodCondition((*p)->pod.uid);
        }
        break;
      }
      case 7: {  // a queue changes
        state.UpsertQueue(Queue(fmt::format("q{}", pick(2)), 1 + pick(4)));
        break;
      }
      case 8: {  // a pod being deleted (terminating)
        auto* p = random_pod();
        if (p == nullptr) break;
        auto t = std::make_shared<CachedPod>(**p);
        t->pod.terminating = true;
        *p = t;
        state.UpsertPod(t);
        break;
      }
      default: {  // a scheduling cycle on an incremental snapshot, handed back
        ClusterState::Snapshot snap = state.TakeSnapshot();
        REQUIRE(RunCycleOn(snap.cluster, *config, deps, fmt::format("s{}", step),
                           std::chrono::system_clock::now())
                    .ok());
        state.ReturnSnapshot(std::move(snap.cluster), snap.handout);
        break;
      }
    }
    // Compare, then hand the snapshot back so the chain of incremental updates goes on.
    ClusterState::Snapshot inc = state.TakeSnapshot();
    ClusterState::Snapshot full = state.TakeFullSnapshot();
    INFO("seed " << seed << " step " << step);
    REQUIRE(Describe(inc.cluster) == Describe(full.cluster));
    state.ReturnSnapshot(std::move(inc.cluster), inc.handout);
    incremental = state.snapshot_stats().incremental;
  }
  // The seeds together must have exercised evictions (reclaim/preempt), not just allocations.
  static int evictions_so_far = 0;
  evictions_so_far += evictor.evictions;
  if (seed == 5u) CHECK(evictions_so_far > 0);
  CHECK(incremental > 200);
  CHECK(state.snapshot_stats().full == 1);
  // Every reused snapshot was compared by content with a complete copy, and none differed.
  CHECK(state.snapshot_stats().verified == incremental);
  CHECK(state.snapshot_stats().diverged == 0);
}

TEST_CASE(
    "ClusterState: reused snapshots match complete copies by content through random adds, "
    "updates, deletes, assumes and forgets",
    "[sched][cache][snapshot]") {
  const unsigned seed = GENERATE(11u, 12u, 13u);
  std::mt19937 rng(seed);
  ClusterStateOptions options;
  options.full_snapshot_every = 1000;
  options.verify_snapshots = true;
  ClusterState state(options);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::map<std::string, std::shared_ptr<CachedPod>> pods;
  state.UpsertQueue(Queue("q0", 1));
  state.UpsertQueue(Queue("q1", 2));
  for (int step = 0; step < 400; ++step) {
    const int what = pick(8);
    if (what == 0) {  // a pod of ours, pending or bound, in a group or not
      auto p = std::make_shared<CachedPod>();
      p->pod.namespace_name = "ns";
      p->pod.name = fmt::format("p{}", pick(40));
      p->pod.uid = "uid-" + p->pod.name;
      p->pod.scheduler_name = pick(5) == 0 ? "default-scheduler" : "volcano";
      if (int g = pick(4); g < 3) p->pod.group_name = fmt::format("g{}", g);
      if (pick(3) == 0) {
        p->pod.node_name = fmt::format("n{}", pick(4));
        p->pod.phase = api::PodPhase::kRunning;
      }
      p->pod.request = Req(500 * (1 + pick(4)), pick(2));
      pods[p->pod.uid] = p;
      state.UpsertPod(p);
    } else if (what == 1 && !pods.empty()) {  // a pod deleted
      auto it = pods.begin();
      std::advance(it, pick(static_cast<int>(pods.size())));
      state.DeletePod(it->second->pod);
      pods.erase(it);
    } else if (what == 2) {
      const std::string name = fmt::format("n{}", pick(4));
      if (pick(5) == 0) {
        state.DeleteNode(name);
      } else {
        state.UpsertNode(Node(name, 1 + pick(4), pick(5) == 0));
      }
    } else if (what == 3) {
      const std::string name = fmt::format("g{}", pick(3));
      if (pick(4) == 0) {
        state.DeletePodGroup("ns", name);
      } else {
        state.UpsertPodGroup(
            Group(name, 1 + pick(2), fmt::format("{}-{}", name, pick(2)), "Inqueue"));
      }
    } else if ((what == 4 || what == 5) && !pods.empty()) {  // assume, sometimes forget
      auto it = pods.begin();
      std::advance(it, pick(static_cast<int>(pods.size())));
      const api::CompactPod& pod = it->second->pod;
      (void)state.Assume(
          BindRequest{pod.uid, pod.namespace_name, pod.name, fmt::format("n{}", pick(4))});
      if (pick(3) == 0) state.Forget(pod.uid);
    } else if (what == 6 && !pods.empty()) {  // written status lands or is forgotten
      auto it = pods.begin();
      std::advance(it, pick(static_cast<int>(pods.size())));
      if (pick(2) == 0) {
        state.SetPodCondition(it->first, PodScheduledCondition{"Unschedulable", "x", ""});
      } else {
        state.ForgetPodCondition(it->first);
      }
      state.SetPodGroupStatus(fmt::format("ns/g{}", pick(3)), PodGroupStatus{});
      state.SetQueueAllocated(fmt::format("q{}", pick(2)), Resource());
    } else {
      state.UpsertQueue(Queue(fmt::format("q{}", pick(2)), 1 + pick(3)));
    }
    // Every step is a cycle: take (checked by content inside), compare, hand back.
    ClusterState::Snapshot inc = state.TakeSnapshot();
    ClusterState::Snapshot full = state.TakeFullSnapshot();
    INFO("seed " << seed << " step " << step);
    REQUIRE(SnapshotDifference(inc.cluster, full.cluster).empty());
    state.ReturnSnapshot(std::move(inc.cluster), inc.handout);
  }
  CHECK(state.snapshot_stats().full == 1);
  CHECK(state.snapshot_stats().verified == 399);
  CHECK(state.snapshot_stats().diverged == 0);
}

TEST_CASE("ClusterState: a reused snapshot changed behind the tracking is caught by content",
          "[sched][cache][snapshot]") {
  ClusterStateOptions options;
  options.verify_snapshots = true;
  ClusterState state(options);
  state.UpsertNode(Node("n0", 4, false));
  state.UpsertNode(Node("n1", 4, false));
  ClusterState::Snapshot s = state.TakeSnapshot();
  // Same counts of jobs, nodes and tasks: only a content check can tell.
  s.cluster.nodes().at("n1").labels()["zone"] = "stale";
  state.ReturnSnapshot(std::move(s.cluster), s.handout);
  ClusterState::Snapshot next = state.TakeSnapshot();
  CHECK(state.snapshot_stats().diverged == 1);
  CHECK(state.snapshot_stats().full == 2);  // replaced by a complete copy
  CHECK(next.cluster.nodes().at("n1").labels().count("zone") == 0);
  CHECK(Describe(next.cluster) == Describe(state.TakeFullSnapshot().cluster));
}

TEST_CASE("SnapshotDifference: names the first difference and is empty for equal snapshots",
          "[sched][cache][snapshot]") {
  ClusterState state({});
  state.UpsertQueue(Queue("q0", 1));
  state.UpsertNode(Node("n0", 4, false));
  state.UpsertPodGroup(Group("g1", 1, "u1", "Inqueue"));
  auto p = std::make_shared<CachedPod>();
  p->pod.namespace_name = "ns";
  p->pod.name = "p0";
  p->pod.uid = "uid-p0";
  p->pod.scheduler_name = "volcano";
  p->pod.group_name = "g1";
  p->pod.node_name = "n0";
  p->pod.phase = api::PodPhase::kRunning;
  p->pod.request = Req(500, 1);
  state.UpsertPod(p);
  ClusterInfo a = state.TakeFullSnapshot().cluster;
  ClusterInfo b = state.TakeFullSnapshot().cluster;
  CHECK(SnapshotDifference(a, b).empty());
  b.queues().at("q0").weight = 7;
  CHECK(SnapshotDifference(a, b).find("queue q0") != std::string::npos);
  b = state.TakeFullSnapshot().cluster;
  b.nodes().at("n0").set_unschedulable(true);
  CHECK(SnapshotDifference(a, b).find("node n0") != std::string::npos);
  b = state.TakeFullSnapshot().cluster;
  b.FindJob("ns/g1")->min_available = 3;
  CHECK(SnapshotDifference(a, b).find("job ns/g1") != std::string::npos);
  b = state.TakeFullSnapshot().cluster;
  b.FindJob("ns/g1")->FindTask("uid-p0")->scheduled_condition =
      PodScheduledCondition{"Unschedulable", "x", ""};
  CHECK(SnapshotDifference(a, b).find("task uid-p0") != std::string::npos);
}

TEST_CASE("ClusterState: a snapshot that is not the last one handed out is not reused",
          "[sched][cache][snapshot]") {
  ClusterState state({});
  state.UpsertNode(Node("n0", 4, false));
  ClusterState::Snapshot a = state.TakeSnapshot();
  ClusterState::Snapshot b = state.TakeSnapshot();
  state.ReturnSnapshot(std::move(a.cluster), a.handout);  // stale: dropped
  (void)state.TakeSnapshot();
  CHECK(state.snapshot_stats().full == 3);
  state.ReturnSnapshot(std::move(b.cluster), b.handout);  // stale too now
  ClusterState::Snapshot c = state.TakeSnapshot();
  CHECK(state.snapshot_stats().full == 4);
  state.ReturnSnapshot(std::move(c.cluster), c.handout);
  (void)state.TakeSnapshot();
  CHECK(state.snapshot_stats().incremental == 1);
}

TEST_CASE("ClusterState: incremental snapshots copy only what changed",
          "[sched][cache][snapshot]") {
  ClusterState state({});
  for (int n = 0; n < 10; ++n) state.UpsertNode(Node(fmt::format("n{}", n), 4, false));
  for (int g = 0; g < 20; ++g) {
    state.UpsertPodGroup(Group(fmt::format("g{}", g), 1, fmt::format("u{}", g), "Running"));
    auto p = std::make_shared<CachedPod>();
    p->pod.namespace_name = "ns";
    p->pod.name = fmt::format("p{}", g);
    p->pod.uid = "uid-" + p->pod.name;
    p->pod.scheduler_name = "volcano";
    p->pod.group_name = fmt::format("g{}", g);
    p->pod.node_name = fmt::format("n{}", g % 10);
    p->pod.phase = api::PodPhase::kRunning;
    p->pod.request = Req(500, 0);
    state.UpsertPod(p);
  }
  ClusterState::Snapshot s = state.TakeSnapshot();
  CHECK(state.snapshot_stats().jobs_copied == 20);
  state.ReturnSnapshot(std::move(s.cluster), s.handout);
  // One pod finishes: one job is copied, no node whole.
  auto done = std::make_shared<CachedPod>();
  done->pod.namespace_name = "ns";
  done->pod.name = "p3";
  done->pod.uid = "uid-p3";
  done->pod.scheduler_name = "volcano";
  done->pod.group_name = "g3";
  done->pod.node_name = "n3";
  done->pod.phase = api::PodPhase::kSucceeded;
  done->pod.request = Req(500, 0);
  state.UpsertPod(done);
  s = state.TakeSnapshot();
  CHECK(state.snapshot_stats().incremental == 1);
  CHECK(state.snapshot_stats().jobs_copied == 1);
  CHECK(state.snapshot_stats().nodes_copied == 0);
  CHECK(Describe(s.cluster) == Describe(state.TakeFullSnapshot().cluster));
  state.ReturnSnapshot(std::move(s.cluster), s.handout);
  // A node is relabelled: that node is copied whole, no job.
  state.UpsertNode(Node("n5", 4, true));
  s = state.TakeSnapshot();
  CHECK(state.snapshot_stats().jobs_copied == 0);
  CHECK(state.snapshot_stats().nodes_copied == 1);
  CHECK(Describe(s.cluster) == Describe(state.TakeFullSnapshot().cluster));
}

}  // namespace
}  // namespace basalt::sched::cache
