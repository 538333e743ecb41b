// The scheduling loop on a FakeClock: it cycles when the cluster changes, no sooner than a
// period after the previous cycle ended (new pods and PodGroups: an arrival delay after they
// came, when one is set), at least every 30 s when nothing changes, and a stop request ends it
// at once. Nothing here sleeps: the test moves fake time and waits (blocking,
// with a real-time guard) for the loop to arm its timers or to bind.

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/api/compact.h"
#include "common/resource/resource_list.h"
#include "common/util/clock.h"
#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/app/scheduler.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/config_store.h"
#include "scheduler/plugins/registry.h"

namespace basalt::sched::app {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Records each bind with the fake time it happened at.
class RecordingBinder final : public Binder {
 public:
  explicit RecordingBinder(Clock* clock) : clock_(clock) {}
  void Bind(const std::string&, std::vector<BindRequest> requests) override {
    std::lock_guard<std::mutex> l(mu_);
    for (const BindRequest& r : requests) binds_.push_back({r.pod_name, clock_->Now()});
    cv_.notify_all();
  }
  struct Record {
    std::string pod;
    Clock::TimePoint at;
  };
  size_t count() {
    std::lock_guard<std::mutex> l(mu_);
    return binds_.size();
  }
  // Blocks until `n` binds happened (false after 10 s of real time: a failure, not a hang).
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, seconds(10), [&] { return binds_.size() >= n; });
  }
  std::vector<Record> binds() {
    std::lock_guard<std::mutex> l(mu_);
    return binds_;
  }

 private:
  Clock* clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Record> binds_;
};

class NullSink final : public StatusSink {
 public:
  void UpdatePodGroupStatus(PodGroupStatusUpdate) override {}
  void UpdatePodCondition(PodConditionUpdate) override {}
  void UpdateQueueStatus(QueueStatusUpdate) override {}
  void RecordEvent(EventRecord) override {}
};

std::shared_ptr<const api::CompactNode> Node() {
  auto n = std::make_shared<api::CompactNode>();
  n->name = "n1";
  n->uid = "n1";
  n->allocatable.Set("cpu", resource::Quantity::FromInt(8));
  n->allocatable.Set("pods", resource::Quantity::FromInt(110));
  n->capacity = n->allocatable;
  n->ready = true;
  return n;
}

std::shared_ptr<const api::PodGroup> Group() {
  absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":)"
      R"({"name":"g1","namespace":"ns","uid":"u1","creationTimestamp":"2026-11-29T10:00:00Z"},)"
      R"("spec":{"minMember":1,"queue":"default"},"status":{"phase":"Inqueue"}})");
  REQUIRE(pg.ok());
  return std::make_shared<api::PodGroup>(*std::move(pg));
}

api::Queue DefaultQueue() {
  absl::StatusOr<api::Queue> q = api::Queue::Parse(
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":)"
      R"({"name":"default"},"spec":{"weight":1},"status":{"state":"Open"}})");
  REQUIRE(q.ok());
  return *std::move(q);
}

std::shared_ptr<const cache::CachedPod> Pod() {
  auto p = std::make_shared<cache::CachedPod>();
  p->pod.namespace_name = "ns";
  p->pod.name = "p1";
  p->pod.uid = "uid-p1";
  p->pod.scheduler_name = "volcano";
  p->pod.group_name = "g1";
  p->pod.request.Set("cpu", resource::Quantity::FromMilli(500));
  return p;
}

// The loop's dependencies on a FakeClock, Volcano's built-in default configuration, one
// node and the default queue; `deps` as RunSchedulingLoop takes them (period 1 s, no arrival
// delay).
struct LoopFixture {
  LoopFixture() {
    deps.state = &state;
    deps.config = &config;
    deps.config_mu = &config_mu;
    deps.cycle = CycleDeps{&plugins, &actions, &binder, nullptr, &sink};
    deps.period = milliseconds(1000);
    deps.clock = &clock;
    state.UpsertQueue(DefaultQueue());
    state.UpsertNode(Node());
  }
  FakeClock clock;
  cache::ClusterState state{cache::ClusterStateOptions{.clock = &clock}};
  const PluginRegistry plugins = NewInTreeRegistry();
  const ActionRegistry actions = NewInTreeActionRegistry();
  ConfigStore config{&plugins, &actions};
  std::mutex config_mu;
  RecordingBinder binder{&clock};  // never assumes: the pod stays pending in the cache
  NullSink sink;
  LoopDeps deps;
};

TEST_CASE(
    "RunSchedulingLoop: a change is scheduled a period after the last cycle, an idle cluster "
    "every 30 s, and stop ends the loop at once",
    "[sched][app]") {
  LoopFixture f;
  FakeClock& clock = f.clock;
  cache::ClusterState& state = f.state;
  RecordingBinder& binder = f.binder;
  LoopDeps& deps = f.deps;
  const Clock::TimePoint start = clock.Now();

  std::jthread loop([&](std::stop_token stop) { (void)RunSchedulingLoop(stop, deps); });
  // The first cycle runs at once (nothing to bind); the loop then waits for a change.
  REQUIRE(clock.WaitForTimers(1));
  CHECK(binder.count() == 0);

  state.UpsertPodGroup(Group());
  state.UpsertPod(Pod());
  // Fake time moves in steps while the loop waits out the period; it binds once it passed.
  while (binder.count() == 0 && clock.Now() - start < seconds(5)) {
    REQUIRE(clock.WaitForTimers(1));
    clock.Advance(milliseconds(100));
  }
  REQUIRE(binder.WaitFor(1));
  const RecordingBinder::Record first = binder.binds()[0];
  CHECK(first.pod == "p1");
  CHECK(first.at - start >= seconds(1));  // not before the period since the first cycle

  // Nothing changes: the next cycle comes when the idle limit passes on the clock, and tries
  // the still pending pod again.
  REQUIRE(clock.WaitForTimers(1));
  CHECK(binder.count() == 1);
  clock.Advance(seconds(30));
  REQUIRE(binder.WaitFor(2));
  CHECK(binder.binds()[1].at - first.at >= seconds(30));

  // Waiting again (30 s on the clock); a stop request ends it without any Advance.
  REQUIRE(clock.WaitForTimers(1));
  loop.request_stop();
  loop.join();
  CHECK(binder.count() == 2);
}

TEST_CASE(
    "RunSchedulingLoop with an arrival delay: a new pod is scheduled that long after it came, "
    "not a period later; other changes still wait for the period",
    "[sched][app]") {
  LoopFixture f;
  FakeClock& clock = f.clock;
  cache::ClusterState& state = f.state;
  RecordingBinder& binder = f.binder;
  LoopDeps& deps = f.deps;
  deps.arrival_delay = milliseconds(20);

  std::jthread loop([&](std::stop_token stop) { (void)RunSchedulingLoop(stop, deps); });
  REQUIRE(clock.WaitForTimers(1));  // the first cycle ran; waiting for a change
  // Half a period later a PodGroup and its pod arrive: the loop arms its timer for 20 ms later
  // (fake time stands still during a cycle, so the cycles' spacing adds nothing here).
  clock.Advance(milliseconds(500));
  const Clock::TimePoint arrived = clock.Now();
  state.UpsertPodGroup(Group());
  state.UpsertPod(Pod());
  REQUIRE(clock.WaitForTimerBy(arrived + milliseconds(20)));
  CHECK(clock.NextDeadline() == arrived + milliseconds(20));
  CHECK(binder.count() == 0);
  clock.Advance(milliseconds(20));
  REQUIRE(binder.WaitFor(1));
  const Clock::TimePoint first = binder.binds()[0].at;
  CHECK(first - arrived == milliseconds(20));  // not the rest of the period (500 ms)

  // An update of the same pod and a node change are no arrivals: the next cycle waits for the
  // period after the last one.
  REQUIRE(clock.WaitForTimerBy(first + seconds(30)));  // idle again
  state.UpsertPod(Pod());
  state.UpsertNode(Node());
  REQUIRE(clock.WaitForTimerBy(first + milliseconds(1000)));
  CHECK(clock.NextDeadline() == first + milliseconds(1000));
  clock.Advance(milliseconds(1000));
  REQUIRE(binder.WaitFor(2));
  CHECK(binder.binds()[1].at - first == milliseconds(1000));
  loop.request_stop();
  loop.join();
}

TEST_CASE("RunConfigWatcher: reloads a changed file on the clock's interval and stops at once",
          "[sched][app]") {
  FakeClock clock;
  cache::ClusterStateOptions options;
  options.clock = &clock;
  cache::ClusterState state(options);
  const PluginRegistry plugins = NewInTreeRegistry();
  const ActionRegistry actions = NewInTreeActionRegistry();
  ConfigStore config(&plugins, &actions);
  std::mutex config_mu;
  const std::string path =
      fmt::format("{}/sched-loop-test-{}.yaml",
                  std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp",
                  static_cast<const void*>(&clock));
  auto write = [&](const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  write("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n");
  std::jthread watcher([&](std::stop_token stop) {
    (void)RunConfigWatcher(stop, path, &config, &config_mu, &state, nullptr, seconds(1), "",
                           &clock);
  });
  REQUIRE(clock.WaitForTimers(1));  // read once, now waiting out the interval
  {
    std::lock_guard<std::mutex> l(config_mu);
    CHECK(config.Current().actions.size() == 2);
  }
  write("actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: gang\n");
  const uint64_t before = state.generation();
  clock.Advance(seconds(1));        // returns once the watcher's timer fired (it no longer counts)
  REQUIRE(clock.WaitForTimers(1));  // read again, reloaded, waiting for the next interval
  {
    std::lock_guard<std::mutex> l(config_mu);
    CHECK(config.Current().actions.size() == 3);
  }
  CHECK(state.generation() > before);
  watcher.request_stop();
  watcher.join();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace basalt::sched::app
