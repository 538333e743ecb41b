// Integration tests of leader election and the event recorder against the real kube-apiserver
// of the test cluster (CTest fixture "cluster"; admin kubeconfig in $BASALT_TEST_KUBECONFIG).
// Each test works in a namespace of its own and deletes it at the end.
//
// Timings: retry period 500 ms; leases of 3 s (processes) or 10 s (in-process hand-over by
// release), so hand-overs take seconds. No test sleeps or polls: they wait, with a deadline,
// for a candidate's callback or a helper's line (Changes), or for renewals of the Lease seen
// through a watch (WaitForRenewals).

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/api/core.h"
#include "common/client/client.h"
#include "common/client/config.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/ctrlkit/leader_election.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

#ifndef BASALT_LEADER_ELECTION_HELPER
#error "BASALT_LEADER_ELECTION_HELPER must name the helper binary"
#endif

namespace basalt::ctrlkit {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr auto kLeaseDuration = seconds(3);
constexpr auto kRetryPeriod = milliseconds(500);
constexpr double kJitter = 1.2;

std::string Kubeconfig() {
  const char* path = getenv("BASALT_TEST_KUBECONFIG");
  if (path == nullptr || *path == '\0') {
    FAIL(
        "BASALT_TEST_KUBECONFIG is not set: run through ctest (fixture \"cluster\") or set it "
        "to the kubeconfig of e2e/cluster/up.sh");
  }
  return path;
}

std::unique_ptr<client::Client> NewClient() {
  client::ClientOptions options;
  options.kubeconfig = Kubeconfig();
  absl::StatusOr<std::unique_ptr<client::Client>> c = client::Client::FromOptions(options);
  INFO(MessageOf(c.status()));
  REQUIRE(c.ok());
  return *std::move(c);
}

// A namespace for one test, deleted when the test ends.
class TestNamespace {
 public:
  TestNamespace(client::Client* client, std::string_view prefix) : client_(client) {
    std::random_device rd;
    name_ = fmt::format("{}-{:08x}", prefix, rd());
    absl::StatusOr<json::Document> created = client_->Create(
        client::Namespaces(), "",
        fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})",
                    name_));
    INFO(MessageOf(created.status()));
    REQUIRE(created.ok());
  }
  ~TestNamespace() { (void)client_->Delete(client::Namespaces(), "", name_); }
  const std::string& name() const { return name_; }

 private:
  client::Client* client_;
  std::string name_;
};

// Wakes Eventually() when a candidate's callback ran or a helper process printed a line
// (the only things its conditions read besides the API server, which WaitForRenewals watches).
class Changes {
 public:
  void Notify() {
    { std::lock_guard<std::mutex> l(mu_); }
    cv_.notify_all();
  }
  bool WaitFor(const std::function<bool()>& cond, steady_clock::duration timeout) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, cond);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};
Changes changes;

bool Eventually(const std::function<bool()>& cond, steady_clock::duration timeout) {
  return changes.WaitFor(cond, timeout);
}

api::LeaseSpec ReadLease(client::Client& c, const std::string& ns, const std::string& name) {
  absl::StatusOr<json::Document> doc = c.Get(client::Leases(), ns, name);
  INFO(MessageOf(doc.status()));
  REQUIRE(doc.ok());
  absl::StatusOr<api::Lease> lease = api::Lease::Parse(json::Serialize(*doc));
  REQUIRE(lease.ok());
  return lease->spec();
}

absl::StatusOr<api::Lease> LeaseOf(json::Document doc) {
  absl::StatusOr<api::Object> obj = api::Object::FromDocument(std::move(doc));
  if (!obj.ok()) return obj.status();
  return api::Lease::FromObject(*std::move(obj));
}

// Watches Lease `name` until its holder has renewed it `renewals` times (renewTime moved, the
// holder unchanged), calling `check` at each change; false if that does not happen within
// `timeout`. The watch is the condition: renewals come every retry period.
bool WaitForRenewals(client::Client& c, const std::string& ns, const std::string& name,
                     int renewals, steady_clock::duration timeout,
                     const std::function<void()>& check) {
  absl::StatusOr<json::Document> doc = c.Get(client::Leases(), ns, name);
  INFO(MessageOf(doc.status()));
  REQUIRE(doc.ok());
  absl::StatusOr<api::Lease> first = LeaseOf(*std::move(doc));
  REQUIRE(first.ok());
  api::LeaseSpec last = first->spec();
  std::string rv(first->resource_version());
  int seen = 0;
  const auto deadline = steady_clock::now() + timeout;
  while (seen < renewals && steady_clock::now() < deadline) {
    client::ListOptions options;
    options.field_selector = fmt::format("metadata.name={}", name);
    options.resource_version = rv;
    options.timeout_seconds = std::max<int64_t>(
        1, std::chrono::duration_cast<seconds>(deadline - steady_clock::now()).count());
    absl::Status s = c.Watch(client::Leases(), ns, options, [&](client::WatchEvent&& e) {
      if (e.type == client::WatchEventType::kBookmark) {
        rv = std::string(json::GetString(*json::Find(e.object, "metadata"), "resourceVersion"));
        return absl::OkStatus();
      }
      absl::StatusOr<api::Lease> lease = LeaseOf(std::move(e.object));
      if (!lease.ok()) return lease.status();
      rv = std::string(lease->resource_version());
      const api::LeaseSpec& now = lease->spec();
      if (now.holder_identity == last.holder_identity && now.renew_time != last.renew_time) ++seen;
      last = now;
      check();
      return seen >= renewals ? absl::CancelledError("renewed") : absl::OkStatus();
    });
    if (absl::IsCancelled(s)) break;
    INFO(MessageOf(s));
    REQUIRE(s.ok());  // the server ended the watch at timeoutSeconds: resume
  }
  return seen >= renewals;
}

// One in-process candidate: an elector running on its own thread.
struct Candidate {
  std::string id;
  std::unique_ptr<LeaderElector> elector;
  std::stop_source stop;
  std::thread thread;
  std::atomic<bool> leading{false};
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  absl::Status result;

  Candidate(client::Client* c, const std::string& ns, std::string identity,
            Clock::Duration lease_duration, Clock::Duration renew_deadline)
      : id(identity) {
    LeaderElectionConfig config;
    config.lease_namespace = ns;
    config.lease_name = "basalt-test";
    config.identity = std::move(identity);
    config.lease_duration = lease_duration;
    config.renew_deadline = renew_deadline;
    config.retry_period = kRetryPeriod;
    config.jitter_factor = kJitter;
    config.callbacks.on_started_leading = [this](std::stop_token token) {
      ++started;
      leading = true;
      changes.Notify();
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, token, [] { return false; });
      leading = false;
      changes.Notify();
    };
    config.callbacks.on_stopped_leading = [this] {
      ++stopped;
      changes.Notify();
    };
    absl::StatusOr<std::unique_ptr<LeaderElector>> e = LeaderElector::New(c, std::move(config));
    REQUIRE(e.ok());
    elector = *std::move(e);
    thread = std::thread([this] { result = elector->Run(stop.get_token()); });
  }
  void Stop() {
    stop.request_stop();
    if (thread.joinable()) thread.join();
  }
  ~Candidate() { Stop(); }
};

TEST_CASE("Leader election: of two electors exactly one leads and the other takes over on release",
          "[integration][leaderelection]") {
  std::unique_ptr<client::Client> c = NewClient();
  TestNamespace ns(c.get(), "le-inproc");
  // A long lease, so a hand-over by release (one retry period) is clearly told apart from
  // one by expiry (at least 10 s - 1.1 s after the last renewal was observed).
  auto a = std::make_unique<Candidate>(c.get(), ns.name(), "candidate-a", seconds(10), seconds(5));
  auto b = std::make_unique<Candidate>(c.get(), ns.name(), "candidate-b", seconds(10), seconds(5));
  REQUIRE(Eventually([&] { return a->leading || b->leading; }, seconds(10)));
  // For several renewal rounds, never both.
  REQUIRE(WaitForRenewals(*c, ns.name(), "basalt-test", 3, seconds(15),
                          [&] { CHECK(a->leading + b->leading == 1); }));
  Candidate* leader = a->leading ? a.get() : b.get();
  Candidate* follower = a->leading ? b.get() : a.get();
  api::LeaseSpec held = ReadLease(*c, ns.name(), "basalt-test");
  CHECK(held.holder_identity == leader->id);
  CHECK(held.lease_duration_seconds == 10);

  const auto released_at = steady_clock::now();
  leader->Stop();
  CHECK(leader->result.ok());
  CHECK(leader->stopped == 1);
  // Released: the follower does not wait for the lease duration, only for its next retry.
  REQUIRE(Eventually([&] { return follower->leading.load(); }, seconds(5)));
  const auto took = steady_clock::now() - released_at;
  CHECK(took < kRetryPeriod * (1 + kJitter) + seconds(3));
  api::LeaseSpec taken = ReadLease(*c, ns.name(), "basalt-test");
  CHECK(taken.holder_identity == follower->id);
  CHECK(taken.lease_transitions == held.lease_transitions.value_or(0) + 1);
  follower->Stop();
  CHECK(ReadLease(*c, ns.name(), "basalt-test").holder_identity.empty());
}

// A helper process and the lines it printed.
class HelperProcess {
 public:
  HelperProcess(const std::string& ns, const std::string& identity) : identity_(identity) {
    int fds[2];
    REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
    const std::vector<std::string> args = {BASALT_LEADER_ELECTION_HELPER,
                                           "--kubeconfig=" + Kubeconfig(),
                                           "--namespace=" + ns,
                                           "--name=basalt-test",
                                           "--identity=" + identity,
                                           "--leader-elect-lease-duration=3s",
                                           "--leader-elect-renew-deadline=2s",
                                           "--leader-elect-retry-period=500ms"};
    // Built before fork: the child of a multi-threaded process may only call
    // async-signal-safe functions (no malloc) before exec.
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy.
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] {
      std::string partial;
      char buf[512];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) {
        partial.append(buf, static_cast<size_t>(n));
        size_t pos;
        while ((pos = partial.find('\n')) != std::string::npos) {
          {
            std::lock_guard<std::mutex> l(mu_);
            lines_.push_back(partial.substr(0, pos));
          }
          partial.erase(0, pos + 1);
          changes.Notify();
        }
      }
      close(fd);
    });
  }
  ~HelperProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
    }
    Wait();
  }

  bool Printed(const std::string& line) const {
    std::lock_guard<std::mutex> l(mu_);
    for (const std::string& s : lines_) {
      if (s == line) return true;
    }
    return false;
  }
  bool Leading() const { return Printed("LEADING " + identity_); }
  void Signal(int signo) { kill(pid_, signo); }
  // Reaps the process, then drains its output: the last lines it printed (e.g. "STOPPED ...")
  // may still be in the pipe when waitpid returns, so Printed() is only final after the reader
  // has seen EOF.
  int Wait() {
    int status = 0;
    if (pid_ > 0) {
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (reader_.joinable()) reader_.join();
    return status;
  }
  const std::string& identity() const { return identity_; }

 private:
  std::string identity_;
  pid_t pid_ = -1;
  std::thread reader_;
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_CASE(
    "Leader election: two processes, one leads, SIGKILL the leader and the other takes over "
    "after the lease expires",
    "[integration][leaderelection]") {
  std::unique_ptr<client::Client> c = NewClient();
  TestNamespace ns(c.get(), "le-procs");
  auto p1 = std::make_unique<HelperProcess>(ns.name(), "proc-1");
  auto p2 = std::make_unique<HelperProcess>(ns.name(), "proc-2");
  REQUIRE(Eventually([&] { return p1->Leading() || p2->Leading(); }, seconds(15)));
  // Several renewal rounds (seen on the Lease), and never two leaders.
  REQUIRE(WaitForRenewals(*c, ns.name(), "basalt-test", 3, seconds(15),
                          [&] { CHECK(p1->Leading() + p2->Leading() == 1); }));
  REQUIRE(p1->Leading() + p2->Leading() == 1);
  HelperProcess* leader = p1->Leading() ? p1.get() : p2.get();
  HelperProcess* follower = p1->Leading() ? p2.get() : p1.get();
  const api::LeaseSpec before = ReadLease(*c, ns.name(), "basalt-test");
  CHECK(before.holder_identity == leader->identity());

  const auto killed_at = steady_clock::now();
  leader->Signal(SIGKILL);  // No release: the follower must wait for the lease to expire.
  leader->Wait();
  REQUIRE(Eventually([&] { return follower->Leading(); }, seconds(15)));
  const auto took = steady_clock::now() - killed_at;
  INFO(
      fmt::format("took over after {} ms", std::chrono::duration_cast<milliseconds>(took).count()));
  // Not before the lease (as last observed, at most one retry before the kill) expired...
  CHECK(took >= kLeaseDuration - kRetryPeriod * (1 + kJitter));
  // ...and within lease duration + retry period (with jitter) + slack.
  CHECK(took <= kLeaseDuration + kRetryPeriod * (1 + kJitter) + seconds(2));
  const api::LeaseSpec after = ReadLease(*c, ns.name(), "basalt-test");
  CHECK(after.holder_identity == follower->identity());
  CHECK(after.lease_transitions == before.lease_transitions.value_or(0) + 1);

  // A graceful stop of the new leader releases the Lease.
  follower->Signal(SIGTERM);
  const int status = follower->Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(follower->Printed("STOPPED " + follower->identity()));
  CHECK(follower->Printed("EXIT OK"));
  CHECK(ReadLease(*c, ns.name(), "basalt-test").holder_identity.empty());
}

TEST_CASE("Event recorder: 10 identical events become one Event with count 10",
          "[integration][eventrecorder]") {
  std::unique_ptr<client::Client> c = NewClient();
  TestNamespace ns(c.get(), "events");
  absl::StatusOr<json::Document> cm = c->Create(
      client::ConfigMaps(), ns.name(),
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"b"}})");
  REQUIRE(cm.ok());
  absl::StatusOr<api::Object> object = api::Object::FromDocument(*std::move(cm));
  REQUIRE(object.ok());

  EventRecorderOptions options;
  options.component = "basalt-test";
  EventRecorder recorder(c.get(), options);
  for (int i = 0; i < 10; ++i) {
    recorder.Event(*object, EventType::kWarning, "Broken", "the config map is broken");
  }
  recorder.Event(*object, EventType::kNormal, "Fixed", "the config map is fixed");
  recorder.Shutdown();
  CHECK(recorder.stats().created == 2);
  CHECK(recorder.stats().aggregated == 9);

  client::ListOptions list_options;
  list_options.field_selector = "involvedObject.name=cm1";
  absl::StatusOr<client::ObjectList> list = c->List(client::Events(), ns.name(), list_options);
  INFO(MessageOf(list.status()));
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 2);
  int broken = 0;
  for (json::Document& item : list->items) {
    absl::StatusOr<api::Event> ev = api::Event::Parse(json::Serialize(item));
    REQUIRE(ev.ok());
    const api::EventFields& f = ev->fields();
    CHECK(f.source_component == "basalt-test");
    CHECK(f.involved_object.kind == "ConfigMap");
    CHECK(f.involved_object.uid == object->uid());
    if (f.reason == "Broken") {
      ++broken;
      CHECK(f.count == 10);
      CHECK(f.type == "Warning");
      CHECK(ev->name().starts_with("cm1."));
    } else {
      CHECK(f.reason == "Fixed");
      CHECK(f.count == 1);
    }
  }
  CHECK(broken == 1);
}

}  // namespace
}  // namespace basalt::ctrlkit
