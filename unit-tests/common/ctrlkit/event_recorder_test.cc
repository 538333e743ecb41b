#include "common/ctrlkit/event_recorder.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/api/core.h"
#include "common/api/object.h"
#include "common/client/client.h"
#include "common/client/transport.h"
#include "common/util/clock.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::ctrlkit {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// An in-memory API server for core/v1 Events: POST creates, merge PATCH of count and
// lastTimestamp updates, anything else fails. Can hold requests to simulate a slow server.
class FakeEventServer : public client::Transport {
 public:
  absl::StatusOr<client::Response> Do(const client::Request& r) override {
    std::unique_lock<std::mutex> l(mu_);
    ++calls_;
    cv_.notify_all();
    cv_.wait(l, [&] { return !block_; });
    verbs_.push_back(r.verb);
    const std::string prefix = "/api/v1/namespaces/";
    if (r.path.rfind(prefix, 0) != 0) return absl::InternalError("unexpected path " + r.path);
    const std::string rest = r.path.substr(prefix.size());  // ns/events[/name]
    const std::size_t slash = rest.find('/');
    const std::string ns = rest.substr(0, slash);
    const std::string tail = rest.substr(slash + 1);
    if (r.verb == "POST" && tail == "events") {
      absl::StatusOr<api::Event> ev = api::Event::Parse(r.body);
      if (!ev.ok()) return client::Response{400, {}, "{}"};
      const std::string key = ns + "/" + std::string(ev->name());
      if (events_.count(key) != 0) return client::Response{409, {}, "{}"};
      events_.emplace(key, *ev);
      return client::Response{201, {}, ev->ToJson()};
    }
    if (r.verb == "PATCH" && tail.rfind("events/", 0) == 0) {
      const std::string key = ns + "/" + tail.substr(7);
      auto it = events_.find(key);
      if (it == events_.end()) {
        return client::Response{
            404,
            {},
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404})"};
      }
      CHECK(client::FindHeader(r.headers, "Content-Type") == "application/merge-patch+json");
      absl::StatusOr<json::Document> patch = json::Parse(r.body);
      REQUIRE(patch.ok());
      absl::StatusOr<api::Time> last = api::ParseRfc3339(json::GetString(*patch, "lastTimestamp"));
      REQUIRE(last.ok());
      it->second.SetCount(static_cast<int32_t>(json::GetInt(*patch, "count")), *last);
      return client::Response{200, {}, it->second.ToJson()};
    }
    return absl::InternalError(fmt::format("unexpected {} {}", r.verb, r.path));
  }
  absl::StatusOr<client::Response> Stream(const client::Request&, const client::LineCallback&,
                                          client::CancelToken*) override {
    return absl::UnimplementedError("no streams");
  }

  std::vector<api::Event> events() const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<api::Event> out;
    for (const auto& [k, v] : events_) out.push_back(v);
    return out;
  }
  std::vector<std::string> verbs() const {
    std::lock_guard<std::mutex> l(mu_);
    return verbs_;
  }
  void Delete(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    events_.erase(key);
  }
  void SetBlocked(bool b) {
    std::lock_guard<std::mutex> l(mu_);
    block_ = b;
    cv_.notify_all();
  }
  void WaitForCalls(int n) const {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return calls_ >= n; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, api::Event> events_;
  std::vector<std::string> verbs_;
  bool block_ = false;
  int calls_ = 0;
};

api::Object MakeObject(std::string_view kind, std::string_view ns, std::string_view name) {
  api::Object obj;
  obj.SetApiVersionKind(kind == "PodGroup" ? "scheduling.volcano.sh/v1beta1" : "v1", kind);
  obj.SetName(name);
  if (!ns.empty()) obj.SetNamespace(ns);
  obj.SetUid(fmt::format("uid-{}", name));
  return obj;
}

struct Fixture {
  FakeClock clock;
  FakeEventServer* server = nullptr;
  std::unique_ptr<client::Client> client;

  Fixture() {
    auto transport = std::make_unique<FakeEventServer>();
    server = transport.get();
    client = std::make_unique<client::Client>(std::move(transport));
  }
  EventRecorderOptions Options() {
    EventRecorderOptions o;
    o.component = "vc-scheduler";
    o.instance = "node-a";
    o.clock = &clock;
    return o;
  }
};

TEST_CASE("EventRecorder: repeats of one event become one Event with count N", "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  const api::Object pod = MakeObject("Pod", "ns1", "p1");
  const api::Time first = f.clock.WallNow();
  for (int i = 0; i < 10; ++i) {
    recorder.Event(pod, EventType::kWarning, "FailedScheduling", "0/8 nodes are available");
    f.clock.Advance(seconds(1));
  }
  recorder.Flush();
  std::vector<api::Event> events = f.server->events();
  REQUIRE(events.size() == 1);
  const api::EventFields& e = events[0].fields();
  CHECK(e.count == 10);
  CHECK(e.type == "Warning");
  CHECK(e.reason == "FailedScheduling");
  CHECK(e.message == "0/8 nodes are available");
  CHECK(e.involved_object.kind == "Pod");
  CHECK(e.involved_object.name == "p1");
  CHECK(e.involved_object.namespace_name == "ns1");
  CHECK(e.involved_object.uid == "uid-p1");
  CHECK(e.source_component == "vc-scheduler");
  CHECK(e.reporting_component == "vc-scheduler");
  CHECK(e.reporting_instance == "node-a");
  CHECK(e.first_timestamp == first);
  CHECK(e.last_timestamp == first + seconds(9));
  CHECK(events[0].namespace_name() == "ns1");
  CHECK(events[0].name().starts_with("p1."));
  CHECK(f.server->verbs() == std::vector<std::string>{"POST", "PATCH", "PATCH", "PATCH", "PATCH",
                                                      "PATCH", "PATCH", "PATCH", "PATCH", "PATCH"});
  EventRecorderStats stats = recorder.stats();
  CHECK(stats.created == 1);
  CHECK(stats.aggregated == 9);
}

TEST_CASE("EventRecorder: different messages, reasons, types and objects make different Events",
          "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  const api::Object pod = MakeObject("Pod", "ns1", "p1");
  recorder.Event(pod, EventType::kWarning, "FailedScheduling", "0/8 nodes: cpu");
  recorder.Event(pod, EventType::kWarning, "FailedScheduling", "0/8 nodes: memory");
  recorder.Event(pod, EventType::kNormal, "FailedScheduling", "0/8 nodes: cpu");
  recorder.Event(pod, EventType::kNormal, "Scheduled", "0/8 nodes: cpu");
  recorder.Event(MakeObject("Pod", "ns1", "p2"), EventType::kNormal, "Scheduled", "0/8 nodes: cpu");
  recorder.Flush();
  std::vector<api::Event> events = f.server->events();
  CHECK(events.size() == 5);
  std::set<std::string> names;
  for (const api::Event& e : events) {
    CHECK(e.fields().count == 1);
    names.insert(std::string(e.name()));
  }
  CHECK(names.size() == 5);  // Unique names even though the fake wall clock stood still.
}

TEST_CASE("EventRecorder: events about cluster-scoped objects go to the default namespace",
          "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  recorder.Event(MakeObject("Queue", "", "q1"), EventType::kNormal, "Open", "queue opened");
  recorder.Shutdown();
  std::vector<api::Event> events = f.server->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].namespace_name() == "default");
  CHECK(events[0].fields().involved_object.namespace_name.empty());
}

TEST_CASE("EventRecorder: the per-object rate limit drops the excess and refills slowly",
          "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  const api::Object pod = MakeObject("Pod", "ns1", "hot");
  for (int i = 0; i < 30; ++i) {
    recorder.Event(pod, EventType::kNormal, "Tick", fmt::format("tick {}", i));
  }
  // Another object has its own bucket.
  recorder.Event(MakeObject("Pod", "ns1", "calm"), EventType::kNormal, "Tick", "tick");
  recorder.Flush();
  CHECK(f.server->events().size() == 26);
  CHECK(recorder.stats().dropped_rate_limited == 5);

  f.clock.Advance(minutes(5));  // One token back.
  recorder.Event(pod, EventType::kNormal, "Tick", "tick 30");
  recorder.Event(pod, EventType::kNormal, "Tick", "tick 31");
  recorder.Flush();
  CHECK(f.server->events().size() == 27);
  CHECK(recorder.stats().dropped_rate_limited == 6);
}

TEST_CASE("EventRecorder: a full queue drops events without blocking the caller",
          "[eventrecorder]") {
  Fixture f;
  EventRecorderOptions options = f.Options();
  options.queue_capacity = 5;
  EventRecorder recorder(f.client.get(), options);
  f.server->SetBlocked(true);
  recorder.Event(MakeObject("Pod", "ns1", "p0"), EventType::kNormal, "R", "m");
  f.server->WaitForCalls(1);  // The sender is stuck in its first request.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= 8; ++i) {
    recorder.Event(MakeObject("Pod", "ns1", fmt::format("p{}", i)), EventType::kNormal, "R", "m");
  }
  CHECK(std::chrono::steady_clock::now() - start < seconds(1));  // Never waited on the server.
  CHECK(recorder.stats().dropped_queue_full == 3);
  f.server->SetBlocked(false);
  recorder.Shutdown();  // Flushes the five queued events.
  CHECK(f.server->events().size() == 6);
  CHECK(recorder.stats().created == 6);
}

TEST_CASE("EventRecorder: a repeat after the aggregation window creates a new Event",
          "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  const api::Object pod = MakeObject("Pod", "ns1", "p1");
  recorder.Event(pod, EventType::kNormal, "Pulled", "image pulled");
  recorder.Flush();
  f.clock.Advance(minutes(11));
  recorder.Event(pod, EventType::kNormal, "Pulled", "image pulled");
  recorder.Flush();
  CHECK(f.server->events().size() == 2);
}

TEST_CASE("EventRecorder: an Event deleted on the server is created again", "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  const api::Object pod = MakeObject("Pod", "ns1", "p1");
  recorder.Event(pod, EventType::kNormal, "Pulled", "image pulled");
  recorder.Flush();
  std::vector<api::Event> events = f.server->events();
  REQUIRE(events.size() == 1);
  f.server->Delete(fmt::format("ns1/{}", events[0].name()));  // Expired by the event TTL.
  recorder.Event(pod, EventType::kNormal, "Pulled", "image pulled");
  recorder.Flush();
  events = f.server->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].fields().count == 1);
  CHECK(recorder.stats().created == 2);
}

TEST_CASE("EventRecorder: Shutdown sends what is queued and refuses new events",
          "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  for (int i = 0; i < 3; ++i) {
    recorder.Event(MakeObject("Pod", "ns1", fmt::format("p{}", i)), EventType::kNormal, "R", "m");
  }
  recorder.Shutdown();
  CHECK(f.server->events().size() == 3);
  recorder.Event(MakeObject("Pod", "ns1", "late"), EventType::kNormal, "R", "m");
  recorder.Shutdown();  // Idempotent.
  CHECK(f.server->events().size() == 3);
  CHECK(recorder.stats().dropped_shutdown == 1);
}

TEST_CASE("EventRecorder: an event about an object without a name is dropped and counted",
          "[eventrecorder]") {
  Fixture f;
  EventRecorder recorder(f.client.get(), f.Options());
  api::ObjectReference nameless;
  nameless.kind = "Pod";
  nameless.namespace_name = "ns1";
  recorder.Event(nameless, EventType::kNormal, "R", "m");
  recorder.Shutdown();
  CHECK(f.server->events().empty());
  CHECK(recorder.stats().failed == 1);
}

}  // namespace
}  // namespace basalt::ctrlkit
