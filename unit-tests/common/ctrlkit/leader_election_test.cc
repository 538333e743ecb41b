#include "common/ctrlkit/leader_election.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/api/core.h"
#include "common/client/client.h"
#include "common/client/transport.h"
#include "common/util/clock.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::ctrlkit {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kNs[] = "volcano-system";
constexpr char kName[] = "vc-scheduler";
constexpr char kCollection[] = "/apis/coordination.k8s.io/v1/namespaces/volcano-system/leases";
constexpr char kPath[] =
    "/apis/coordination.k8s.io/v1/namespaces/volcano-system/leases/vc-scheduler";

std::mutex& ChangeMutex() {
  static std::mutex mu;
  return mu;
}
std::condition_variable& ChangeCv() {
  static std::condition_variable cv;
  return cv;
}
// Wakes Eventually() after a change it may be waiting for (call without holding other locks
// that a condition takes: the lease server's, the elector's).
void Changed() {
  { std::lock_guard<std::mutex> l(ChangeMutex()); }
  ChangeCv().notify_all();
}

client::Response StatusResponse(int code, std::string_view reason, std::string_view message) {
  return client::Response{
      code,
      {{"Content-Type", "application/json"}},
      fmt::format(
          R"({{"kind":"Status","apiVersion":"v1","status":"Failure","message":"{}","reason":"{}","code":{}}})",
          message, reason, code)};
}

// An in-memory API server holding one Lease, with resourceVersion preconditions on PUT
// (409 Conflict when stale) and failure injection. Hand-written fake at the Transport seam.
class FakeLeaseServer : public client::Transport {
 public:
  absl::StatusOr<client::Response> Do(const client::Request& r) override {
    absl::StatusOr<client::Response> response = Serve(r);
    Changed();  // the lease may have changed
    return response;
  }
  absl::StatusOr<client::Response> Serve(const client::Request& r) {
    std::unique_lock<std::mutex> l(mu_);
    requests_.push_back(r.verb);
    ++calls_;
    cv_.notify_all();
    cv_.wait(l, [&] { return !block_; });
    if (!fail_.ok()) return fail_;
    if (before_write_ && (r.verb == "PUT" || r.verb == "POST")) {
      auto hook = std::move(before_write_);
      before_write_ = nullptr;
      l.unlock();
      hook();
      l.lock();
    }
    if (r.verb == "GET" && r.path == kPath) {
      if (!lease_) return StatusResponse(404, "NotFound", "leases not found");
      return client::Response{200, {}, lease_->ToJson()};
    }
    if (r.verb == "POST" && r.path == kCollection) {
      if (lease_) return StatusResponse(409, "AlreadyExists", "already exists");
      absl::StatusOr<api::Lease> lease = api::Lease::Parse(r.body);
      if (!lease.ok()) return StatusResponse(400, "BadRequest", "bad body");
      StoreLocked(*std::move(lease));
      return client::Response{201, {}, lease_->ToJson()};
    }
    if (r.verb == "PUT" && r.path == kPath) {
      if (!lease_) return StatusResponse(404, "NotFound", "leases not found");
      absl::StatusOr<api::Lease> lease = api::Lease::Parse(r.body);
      if (!lease.ok()) return StatusResponse(400, "BadRequest", "bad body");
      if (lease->resource_version() != lease_->resource_version()) {
        return StatusResponse(409, "Conflict", "the object has been modified");
      }
      StoreLocked(*std::move(lease));
      return client::Response{200, {}, lease_->ToJson()};
    }
    return absl::InternalError(fmt::format("unexpected {} {}", r.verb, r.path));
  }
  absl::StatusOr<client::Response> Stream(const client::Request&, const client::LineCallback&,
                                          client::CancelToken*) override {
    return absl::UnimplementedError("no streams");
  }

  // Writes the Lease as another candidate would.
  void Put(const api::LeaseSpec& spec) {
    std::lock_guard<std::mutex> l(mu_);
    api::Lease lease = lease_ ? *lease_ : api::Lease::Make(kNs, kName);
    lease.SetSpec(spec);
    StoreLocked(std::move(lease));
  }
  std::optional<api::LeaseSpec> spec() const {
    std::lock_guard<std::mutex> l(mu_);
    if (!lease_) return std::nullopt;
    return lease_->spec();
  }
  void SetFailure(absl::Status s) {
    std::lock_guard<std::mutex> l(mu_);
    fail_ = std::move(s);
  }
  void SetBlocked(bool b) {
    std::lock_guard<std::mutex> l(mu_);
    block_ = b;
    cv_.notify_all();
  }
  // Runs `hook` (once) just before the next write is applied: a racing candidate.
  void BeforeNextWrite(std::function<void()> hook) {
    std::lock_guard<std::mutex> l(mu_);
    before_write_ = std::move(hook);
  }
  int calls() const {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  // Blocks (really) until more than `n` requests arrived.
  void WaitForCalls(int n) const {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return calls_ > n; });
  }

 private:
  void StoreLocked(api::Lease lease) {
    lease.SetResourceVersion(std::to_string(++rv_));
    lease_ = std::move(lease);
  }

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<api::Lease> lease_;
  int64_t rv_ = 100;
  absl::Status fail_;
  bool block_ = false;
  int calls_ = 0;
  std::function<void()> before_write_;
  std::vector<std::string> requests_;
};

struct Fixture {
  FakeClock clock;
  FakeLeaseServer* server = nullptr;
  std::unique_ptr<client::Client> client;

  Fixture() {
    auto transport = std::make_unique<FakeLeaseServer>();
    server = transport.get();
    client = std::make_unique<client::Client>(std::move(transport));
  }

  LeaderElectionConfig Config(std::string identity) {
    LeaderElectionConfig c;
    c.lease_namespace = kNs;
    c.lease_name = kName;
    c.identity = std::move(identity);
    c.jitter_factor = 0;
    c.clock = &clock;
    c.callbacks.on_started_leading = [](std::stop_token) {};
    return c;
  }

  std::unique_ptr<LeaderElector> New(LeaderElectionConfig c) {
    absl::StatusOr<std::unique_ptr<LeaderElector>> e =
        LeaderElector::New(client.get(), std::move(c));
    INFO(MessageOf(e.status()));
    REQUIRE(e.ok());
    return *std::move(e);
  }

  api::LeaseSpec HeldBy(std::string holder, int32_t transitions = 3) {
    api::LeaseSpec s;
    s.holder_identity = std::move(holder);
    s.lease_duration_seconds = 15;
    s.acquire_time = clock.WallNow();
    s.renew_time = clock.WallNow();
    s.lease_transitions = transitions;
    return s;
  }
};

// Waits (really) for a condition another thread makes true, re-checking it each time the fake
// server or a leader callback reports a change (Changed()), not by polling; fails after 10 s.
bool Eventually(const std::function<bool()>& cond) {
  std::unique_lock<std::mutex> l(ChangeMutex());
  return ChangeCv().wait_for(l, seconds(10), cond);
}

// Records what the callbacks saw, thread-safely.
struct Recorder {
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  std::atomic<bool> token_fired{false};
  std::mutex mu;
  std::vector<std::string> leaders;

  void Attach(LeaderElectionConfig& c) {
    c.callbacks.on_started_leading = [this](std::stop_token stop) {
      ++started;
      Changed();
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, stop, [] { return false; });
      token_fired = true;
      Changed();
    };
    c.callbacks.on_stopped_leading = [this] {
      ++stopped;
      Changed();
    };
    c.callbacks.on_new_leader = [this](const std::string& id) {
      std::lock_guard<std::mutex> l(mu);
      leaders.push_back(id);
    };
  }
};

TEST_CASE("LeaderElector: creates the Lease and leads when none exists", "[leaderelection]") {
  Fixture f;
  auto e = f.New(f.Config("a"));
  REQUIRE(e->TryAcquireOrRenew());
  std::optional<api::LeaseSpec> spec = f.server->spec();
  REQUIRE(spec.has_value());
  CHECK(spec->holder_identity == "a");
  CHECK(spec->lease_duration_seconds == 15);
  CHECK(spec->lease_transitions == 0);
  CHECK(spec->acquire_time == f.clock.WallNow());
  CHECK(spec->renew_time == f.clock.WallNow());
  CHECK(e->leader() == "a");
}

TEST_CASE("LeaderElector: does not take over a Lease before it expires", "[leaderelection]") {
  Fixture f;
  f.server->Put(f.HeldBy("other"));
  auto e = f.New(f.Config("a"));
  CHECK_FALSE(e->TryAcquireOrRenew());
  CHECK(e->leader() == "other");
  f.clock.Advance(seconds(14));
  CHECK_FALSE(e->TryAcquireOrRenew());
  CHECK(f.server->spec()->holder_identity == "other");
}

TEST_CASE("LeaderElector: takes over an expired Lease and counts the transition",
          "[leaderelection]") {
  Fixture f;
  f.server->Put(f.HeldBy("other", 3));
  auto e = f.New(f.Config("a"));
  CHECK_FALSE(e->TryAcquireOrRenew());  // First observation starts the lease duration.
  f.clock.Advance(seconds(15));
  REQUIRE(e->TryAcquireOrRenew());
  api::LeaseSpec spec = *f.server->spec();
  CHECK(spec.holder_identity == "a");
  CHECK(spec.lease_transitions == 4);
  CHECK(spec.acquire_time == f.clock.WallNow());
  CHECK(spec.renew_time == f.clock.WallNow());
  CHECK(e->leader() == "a");
}

TEST_CASE("LeaderElector: expiry counts from when the renewal was observed, not renewTime",
          "[leaderelection]") {
  Fixture f;
  // The holder's wall clock is an hour behind ours: its renewTime looks long expired.
  api::LeaseSpec skewed = f.HeldBy("other");
  skewed.renew_time = f.clock.WallNow() - std::chrono::hours(1);
  f.server->Put(skewed);
  auto e = f.New(f.Config("a"));
  CHECK_FALSE(e->TryAcquireOrRenew());
  f.clock.Advance(seconds(10));
  skewed.renew_time = *skewed.renew_time + seconds(10);  // The holder renews.
  f.server->Put(skewed);
  CHECK_FALSE(e->TryAcquireOrRenew());  // Observed a change: the duration restarts.
  f.clock.Advance(seconds(10));
  CHECK_FALSE(e->TryAcquireOrRenew());  // 20 s since the first sighting, 10 s since renewal.
  f.clock.Advance(seconds(5));
  CHECK(e->TryAcquireOrRenew());
}

TEST_CASE("LeaderElector: a released Lease is taken over at once", "[leaderelection]") {
  Fixture f;
  api::LeaseSpec released = f.HeldBy("", 2);
  released.lease_duration_seconds = 1;
  f.server->Put(released);
  auto e = f.New(f.Config("a"));
  REQUIRE(e->TryAcquireOrRenew());
  CHECK(f.server->spec()->holder_identity == "a");
  CHECK(f.server->spec()->lease_transitions == 3);
}

TEST_CASE("LeaderElector: renewing keeps acquireTime and transitions, moves renewTime",
          "[leaderelection]") {
  Fixture f;
  auto e = f.New(f.Config("a"));
  REQUIRE(e->TryAcquireOrRenew());
  const api::LeaseSpec first = *f.server->spec();
  f.clock.Advance(seconds(2));
  REQUIRE(e->TryAcquireOrRenew());
  const api::LeaseSpec second = *f.server->spec();
  CHECK(second.holder_identity == "a");
  CHECK(second.acquire_time == first.acquire_time);
  CHECK(second.lease_transitions == first.lease_transitions);
  CHECK(*second.renew_time == *first.renew_time + seconds(2));
}

TEST_CASE("LeaderElector: loses the race on 409 Conflict and leaves the winner alone",
          "[leaderelection]") {
  Fixture f;
  f.server->Put(f.HeldBy("old"));
  auto a = f.New(f.Config("a"));
  CHECK_FALSE(a->TryAcquireOrRenew());
  f.clock.Advance(seconds(16));
  // Candidate "b" writes between a's GET and a's PUT.
  f.server->BeforeNextWrite([&] { f.server->Put(f.HeldBy("b", 4)); });
  CHECK_FALSE(a->TryAcquireOrRenew());
  CHECK(f.server->spec()->holder_identity == "b");
  // Next round a sees b's fresh record and waits for it to expire.
  CHECK_FALSE(a->TryAcquireOrRenew());
  CHECK(a->leader() == "b");
}

TEST_CASE("LeaderElector: Run leads, then releases the Lease on cancel", "[leaderelection]") {
  Fixture f;
  Recorder rec;
  LeaderElectionConfig c = f.Config("a");
  rec.Attach(c);
  auto e = f.New(std::move(c));
  std::stop_source stop;
  absl::Status result = absl::UnknownError("not returned");
  std::thread t([&] { result = e->Run(stop.get_token()); });
  REQUIRE(Eventually([&] { return rec.started == 1; }));
  CHECK(e->IsLeader());
  CHECK(e->Check().ok());
  stop.request_stop();
  t.join();
  CHECK(result.ok());
  CHECK(rec.token_fired);
  CHECK(rec.stopped == 1);
  CHECK_FALSE(e->IsLeader());
  api::LeaseSpec spec = *f.server->spec();
  CHECK(spec.holder_identity.empty());
  CHECK(spec.lease_duration_seconds == 1);
  CHECK(spec.lease_transitions == 0);

  // A successor takes over on its first attempt, without waiting 15 s.
  auto b = f.New(f.Config("b"));
  CHECK(b->TryAcquireOrRenew());
  CHECK(f.server->spec()->lease_transitions == 1);
}

TEST_CASE("LeaderElector: without release_on_cancel the Lease keeps its holder",
          "[leaderelection]") {
  Fixture f;
  Recorder rec;
  LeaderElectionConfig c = f.Config("a");
  c.release_on_cancel = false;
  rec.Attach(c);
  auto e = f.New(std::move(c));
  std::stop_source stop;
  std::thread t([&] { CHECK(e->Run(stop.get_token()).ok()); });
  REQUIRE(Eventually([&] { return rec.started == 1; }));
  stop.request_stop();
  t.join();
  CHECK(rec.stopped == 1);
  CHECK(f.server->spec()->holder_identity == "a");
}

TEST_CASE("LeaderElector: Run renews every retry period", "[leaderelection]") {
  Fixture f;
  Recorder rec;
  LeaderElectionConfig c = f.Config("a");
  rec.Attach(c);
  auto e = f.New(std::move(c));
  std::stop_source stop;
  std::thread t([&] { CHECK(e->Run(stop.get_token()).ok()); });
  REQUIRE(Eventually([&] { return rec.started == 1; }));
  const api::Time acquired = *f.server->spec()->renew_time;
  for (int i = 1; i <= 3; ++i) {
    const int calls = f.server->calls();
    f.clock.Advance(seconds(2));
    f.server->WaitForCalls(calls + 1);  // GET + PUT of the renewal.
    REQUIRE(Eventually([&] { return *f.server->spec()->renew_time == acquired + seconds(2 * i); }));
  }
  CHECK(e->IsLeader());
  stop.request_stop();
  t.join();
}

TEST_CASE("LeaderElector: a leader that cannot renew stops acting at the renew deadline",
          "[leaderelection]") {
  Fixture f;
  Recorder rec;
  LeaderElectionConfig c = f.Config("a");
  rec.Attach(c);
  auto e = f.New(std::move(c));
  std::stop_source stop;
  absl::Status result;
  std::thread t([&] { result = e->Run(stop.get_token()); });
  REQUIRE(Eventually([&] { return rec.started == 1; }));
  const Clock::TimePoint acquired = f.clock.Now();
  f.server->SetFailure(absl::UnavailableError("connection refused"));
  // Still acting just before the deadline.
  for (int i = 0; i < 19; ++i) f.clock.Advance(milliseconds(500));
  // Both the renewal loop and the watchdog wait for a later time again: nothing is pending.
  REQUIRE(f.clock.WaitForTimers(2));
  CHECK(e->IsLeader());
  CHECK(rec.stopped == 0);
  f.clock.Advance(milliseconds(500));  // acquired + 10 s: the renew deadline.
  REQUIRE(Eventually([&] { return rec.stopped == 1; }));
  CHECK(Eventually([&] { return rec.token_fired.load(); }));
  CHECK_FALSE(e->IsLeader());
  // Stopped before any other candidate may take over (acquired + 15 s at the earliest).
  CHECK(f.clock.Now() - acquired < seconds(15));
  t.join();
  CHECK(result.code() == absl::StatusCode::kAborted);
}

TEST_CASE("LeaderElector: stops acting at the renew deadline even while a renewal hangs",
          "[leaderelection]") {
  Fixture f;
  Recorder rec;
  LeaderElectionConfig c = f.Config("a");
  rec.Attach(c);
  auto e = f.New(std::move(c));
  std::stop_source stop;
  absl::Status result;
  std::thread t([&] { result = e->Run(stop.get_token()); });
  REQUIRE(Eventually([&] { return rec.started == 1; }));
  f.server->SetBlocked(true);
  const int calls = f.server->calls();
  f.clock.Advance(seconds(2));
  f.server->WaitForCalls(calls);  // The renewal's GET now hangs.
  f.clock.Advance(seconds(8));
  REQUIRE(Eventually([&] { return rec.stopped == 1; }));
  CHECK(Eventually([&] { return rec.token_fired.load(); }));
  CHECK_FALSE(e->IsLeader());
  f.server->SetBlocked(false);
  t.join();
  CHECK(result.code() == absl::StatusCode::kAborted);
}

TEST_CASE("LeaderElector: a leader that finds another holder stops at once", "[leaderelection]") {
  Fixture f;
  Recorder rec;
  LeaderElectionConfig c = f.Config("a");
  rec.Attach(c);
  auto e = f.New(std::move(c));
  std::stop_source stop;
  absl::Status result;
  std::thread t([&] { result = e->Run(stop.get_token()); });
  REQUIRE(Eventually([&] { return rec.started == 1; }));
  f.server->Put(f.HeldBy("intruder"));  // e.g. an operator edited the Lease
  f.clock.Advance(seconds(2));
  REQUIRE(Eventually([&] { return rec.stopped == 1; }));
  t.join();
  CHECK(result.code() == absl::StatusCode::kAborted);
  std::lock_guard<std::mutex> l(rec.mu);
  CHECK(rec.leaders == std::vector<std::string>{"a", "intruder"});
}

TEST_CASE("LeaderElector: health check fails when a stopped leader keeps running past the lease",
          "[leaderelection]") {
  Fixture f;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  LeaderElectionConfig c = f.Config("a");
  // A leader callback that ignores its stop token (a bug the liveness probe must catch).
  c.callbacks.on_started_leading = [&](std::stop_token) {
    started = true;
    Changed();
    release.wait(false);
  };
  c.callbacks.on_stopped_leading = [] { Changed(); };  // IsLeader() is false by then
  auto e = f.New(std::move(c));
  CHECK(e->Check().ok());  // Not leading: healthy.
  std::stop_source stop;
  std::thread t([&] { (void)e->Run(stop.get_token()); });
  REQUIRE(Eventually([&] { return started.load(); }));
  CHECK(e->Check().ok());
  f.server->SetFailure(absl::UnavailableError("down"));
  f.clock.Advance(seconds(10));
  REQUIRE(Eventually([&] { return !e->IsLeader(); }));
  CHECK(e->Check().ok());  // Within lease duration + slack.
  f.clock.Advance(seconds(26));
  absl::Status health = e->Check(seconds(20));
  CHECK_FALSE(health.ok());
  CHECK_THAT(std::string(MessageOf(health)), Catch::Contains("not renewed"));
  release = true;
  release.notify_all();
  t.join();
  CHECK(e->Check().ok());
}

TEST_CASE("LeaderElector: config validation", "[leaderelection]") {
  Fixture f;
  CHECK(ValidateLeaderElectionConfig(f.Config("a")).ok());
  LeaderElectionConfig c = f.Config("a");
  c.renew_deadline = seconds(15);
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(c)));
  c = f.Config("a");
  c.jitter_factor = 1.2;
  c.retry_period = seconds(9);  // 10.8 s > renew deadline
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(c)));
  c = f.Config("a");
  c.lease_name.clear();
  CHECK(absl::IsInvalidArgument(ValidateLeaderElectionConfig(c)));
  c = f.Config("a");
  c.callbacks.on_started_leading = nullptr;
  CHECK(absl::IsInvalidArgument(LeaderElector::New(f.client.get(), c).status()));
}

TEST_CASE("LeaderElector: default identity is hostname_uuid and unique", "[leaderelection]") {
  const std::string a = DefaultLeaderIdentity();
  const std::string b = DefaultLeaderIdentity();
  CHECK(a != b);
  const std::size_t sep = a.rfind('_');
  REQUIRE(sep != std::string::npos);
  CHECK(a.size() - sep - 1 == 36);
  CHECK(a[sep + 15] == '4');  // UUID version 4
  Fixture f;
  auto e = f.New(f.Config(""));
  CHECK(e->identity().find('_') != std::string::npos);
}

TEST_CASE("Leader election flags: parsed and removed, other arguments kept", "[leaderelection]") {
  std::vector<std::string> args = {"--kubeconfig=/k",
                                   "--leader-elect=false",
                                   "--leader-elect-lease-duration=30s",
                                   "--leader-elect-renew-deadline",
                                   "20s",
                                   "--leader-elect-retry-period=1m30s",
                                   "--leader-elect-resource-name=vc-controller-manager",
                                   "--leader-elect-resource-namespace",
                                   "kube-system",
                                   "-v",
                                   "4"};
  absl::StatusOr<LeaderElectionFlags> flags = ParseLeaderElectionFlags(args);
  REQUIRE(flags.ok());
  CHECK_FALSE(flags->leader_elect);
  CHECK(flags->lease_duration == seconds(30));
  CHECK(flags->renew_deadline == seconds(20));
  CHECK(flags->retry_period == seconds(90));
  CHECK(flags->resource_name == "vc-controller-manager");
  CHECK(flags->resource_namespace == "kube-system");
  CHECK(args == std::vector<std::string>{"--kubeconfig=/k", "-v", "4"});

  LeaderElectionConfig c;
  flags->ApplyTo(c);
  CHECK(c.lease_name == "vc-controller-manager");
  CHECK(c.lease_namespace == "kube-system");
  CHECK(c.lease_duration == seconds(30));
}

TEST_CASE("Leader election flags: defaults, bare --leader-elect and errors", "[leaderelection]") {
  LeaderElectionFlags defaults;
  defaults.leader_elect = false;
  defaults.resource_name = "vc-scheduler";
  std::vector<std::string> args = {"--leader-elect", "--", "--leader-elect=false"};
  absl::StatusOr<LeaderElectionFlags> flags = ParseLeaderElectionFlags(args, defaults);
  REQUIRE(flags.ok());
  CHECK(flags->leader_elect);
  CHECK(flags->resource_name == "vc-scheduler");
  CHECK(flags->lease_duration == seconds(15));
  CHECK(args == std::vector<std::string>{"--", "--leader-elect=false"});

  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{"--leader-elect=maybe"},
                                             {"--leader-elect-lease-duration=15"},
                                             {"--leader-elect-retry-period"},
                                             {"--leader-elect-renew-deadline=-1s"},
                                             {"--leader-elect-resource-name="}}) {
    INFO(bad[0]);
    CHECK(absl::IsInvalidArgument(ParseLeaderElectionFlags(bad).status()));
  }
  CHECK_THAT(LeaderElectionFlagsUsage(), Catch::Contains("--leader-elect-renew-deadline"));
}

}  // namespace
}  // namespace basalt::ctrlkit
