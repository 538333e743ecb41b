#include "common/informer/shared_informer.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/api/compact.h"
#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "common/informer/informer_factory.h"
#include "common/informer/transforms.h"
#include "common/util/clock.h"
#include "fmt/format.h"
#include "unit-tests/common/informer/test_objects.h"

namespace basalt::informer {
namespace {

using client::FakeTransport;
using std::chrono::milliseconds;
using testing::GoneLine;
using testing::ListBody;
using testing::MakeConfigMap;
using testing::WatchLine;

constexpr char kListPath[] = "/api/v1/namespaces/ns/configmaps?limit=500";
constexpr char kWatchPrefix[] = "/api/v1/namespaces/ns/configmaps?watch=true*";

std::string Cm(std::string name, std::string rv) {
  return MakeConfigMap("ns", std::move(name)).ResourceVersion(std::move(rv)).Json();
}

FakeTransport::StreamScript Held(std::vector<std::string> lines = {}) {
  FakeTransport::StreamScript s;
  s.chunks = std::move(lines);
  s.hold_until_cancelled = true;
  return s;
}

// Records handler calls as "<tag> add ns/a@3", "<tag> update ns/a@3->4", "<tag> delete ns/a@4
// final|unknown", in one shared log so ordering across handlers shows.
class Log {
 public:
  EventHandler Handler(std::string tag) {
    EventHandler h;
    h.on_add = [this, tag](const Object& o) {
      Add(fmt::format("{} add {}@{}", tag, o.key(), o.resource_version()));
    };
    h.on_update = [this, tag](const Object& old_obj, const Object& new_obj) {
      Add(fmt::format("{} update {}@{}->{}", tag, new_obj.key(), old_obj.resource_version(),
                      new_obj.resource_version()));
    };
    h.on_delete = [this, tag](const Object& o, bool unknown) {
      Add(fmt::format("{} delete {}@{} {}", tag, o.key(), o.resource_version(),
                      unknown ? "unknown" : "final"));
    };
    return h;
  }
  void Add(std::string s) {
    std::lock_guard<std::mutex> l(mu_);
    lines_.push_back(std::move(s));
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> l(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

struct Fixture {
  Fixture() {
    auto fake = std::make_unique<FakeTransport>();
    transport = fake.get();
    client = std::make_unique<client::Client>(std::move(fake));
  }
  InformerOptions Options() {
    InformerOptions o;
    o.source = {client::ConfigMaps(), "ns", "", ""};
    o.reflector.clock = &clock;
    o.reflector.jitter = 0;
    o.reflector.random = [] { return 0.0; };
    return o;
  }
  FakeClock clock;
  FakeTransport* transport;
  std::unique_ptr<client::Client> client;
};

TEST_CASE(
    "SharedInformer: handlers see adds, updates and deletes in order, one handler after "
    "the other, with the store already updated",
    "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  f.transport->AddStream(
      kWatchPrefix, Held({WatchLine("ADDED", Cm("b", "11")), WatchLine("MODIFIED", Cm("a", "12")),
                          WatchLine("DELETED", Cm("b", "13"))}));
  SharedInformer informer(f.client.get(), f.Options());
  Log log;
  informer.AddEventHandler(log.Handler("h1"));
  EventHandler checker;
  checker.on_update = [&](const Object&, const Object& new_obj) {
    // The store holds the new state when handlers run.
    log.Add(fmt::format("store {}", informer.store().Get(new_obj.key()).resource_version()));
  };
  informer.AddEventHandler(checker);
  informer.AddEventHandler(log.Handler("h2"));
  CHECK_FALSE(informer.HasSynced());
  informer.Start();
  f.transport->WaitForHeldStream();
  CHECK(informer.HasSynced());
  informer.Stop();

  CHECK(log.lines() == std::vector<std::string>{"h1 add ns/a@3", "h2 add ns/a@3",    //
                                                "h1 add ns/b@11", "h2 add ns/b@11",  //
                                                "h1 update ns/a@3->12", "store 12",  //
                                                "h2 update ns/a@3->12",              //
                                                "h1 delete ns/b@13 final",
                                                "h2 delete ns/b@13 final"});
  CHECK(informer.store().size() == 1);
  CHECK(informer.LastSyncResourceVersion() == "13");
}

TEST_CASE(
    "SharedInformer: a relist after 410 delivers tombstones for objects deleted while the "
    "watch was down",
    "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3"), Cm("b", "4")}));
  FakeTransport::StreamScript gone;
  gone.chunks = {GoneLine()};
  f.transport->AddStream(kWatchPrefix, gone);
  f.transport->AddJson("GET", kListPath, 200, ListBody("30", {Cm("a", "25"), Cm("c", "29")}));
  f.transport->AddStream(kWatchPrefix, Held());
  SharedInformer relisting(f.client.get(), f.Options());
  Log log;
  relisting.AddEventHandler(log.Handler("h"));
  relisting.Start();
  f.transport->WaitForHeldStream();
  relisting.Stop();
  CHECK(log.lines() == std::vector<std::string>{"h add ns/a@3", "h add ns/b@4",
                                                "h delete ns/b@4 unknown", "h update ns/a@3->25",
                                                "h add ns/c@29"});
  CHECK(relisting.store().Get("ns/c"));
  CHECK_FALSE(relisting.store().Get("ns/b"));
  CHECK(relisting.LastSyncResourceVersion() == "30");
}

TEST_CASE(
    "SharedInformer: a handler added after start gets the current contents as adds, then "
    "the live stream",
    "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("b", "4"), Cm("a", "3")}));
  // The watch delivers one event and stays open; the handler is added after it.
  FakeTransport::StreamScript first;
  first.chunks = {WatchLine("ADDED", Cm("c", "11"))};
  first.hold_until_cancelled = true;
  f.transport->AddStream(kWatchPrefix, first);
  SharedInformer informer(f.client.get(), f.Options());
  informer.Start();
  REQUIRE(informer.WaitForCacheSync(std::stop_token(), std::chrono::seconds(10)));
  f.transport->WaitForHeldStream();
  Log log;
  informer.AddEventHandler(log.Handler("late"));
  CHECK(log.lines() ==
        std::vector<std::string>{"late add ns/a@3", "late add ns/b@4", "late add ns/c@11"});
  informer.Stop();
}

TEST_CASE("SharedInformer: handlers may add and remove handlers from inside a handler",
          "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  f.transport->AddStream(kWatchPrefix, Held({WatchLine("ADDED", Cm("b", "11"))}));
  SharedInformer informer(f.client.get(), f.Options());
  Log log;
  HandlerId self = 0;
  EventHandler once;
  once.on_add = [&](const Object& o) {
    log.Add(fmt::format("once add {}", o.key()));
    informer.RemoveEventHandler(self);
    informer.AddEventHandler(log.Handler("child"));
  };
  self = informer.AddEventHandler(once);
  informer.Start();
  f.transport->WaitForHeldStream();
  informer.Stop();
  CHECK(log.lines() ==
        std::vector<std::string>{"once add ns/a", "child add ns/a@3", "child add ns/b@11"});
}

TEST_CASE("SharedInformer: WaitForCacheSync times out or stops while the list keeps failing",
          "[informer]") {
  Fixture f;
  f.transport->SetFallback([](const client::Request&) -> absl::StatusOr<client::Response> {
    return absl::UnavailableError("connection refused");
  });
  SharedInformer informer(f.client.get(), f.Options());
  informer.Start();
  // The timeout runs on the fake clock: advanced once the wait is armed (the reflector's own
  // back-off waits until 800 ms later, so it does not count).
  std::thread advancer([&] {
    if (f.clock.WaitForTimerBy(f.clock.Now() + milliseconds(20))) f.clock.Advance(milliseconds(20));
  });
  CHECK_FALSE(informer.WaitForCacheSync(std::stop_token(), milliseconds(20)));
  advancer.join();
  std::stop_source stop;
  stop.request_stop();
  CHECK_FALSE(informer.WaitForCacheSync(stop.get_token(), std::chrono::hours(1)));
  CHECK_FALSE(WaitForCacheSync(stop.get_token(), std::chrono::hours(1), {&informer}));
  informer.Stop();
  CHECK_FALSE(informer.HasSynced());
}

TEST_CASE("SharedInformer: Run blocks until the stop token is requested, then stops",
          "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  f.transport->AddStream(kWatchPrefix, Held());
  SharedInformer informer(f.client.get(), f.Options());
  std::stop_source stop;
  std::thread runner([&] { informer.Run(stop.get_token()); });
  f.transport->WaitForHeldStream();  // listed and watching
  CHECK(informer.HasSynced());
  stop.request_stop();
  runner.join();  // Run returned: the watch was cancelled and the thread joined
  CHECK(informer.store().size() == 1);
}

TEST_CASE("SharedInformer: resync re-delivers every object as an update to itself", "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  f.transport->AddStream(kWatchPrefix, Held());
  InformerOptions options = f.Options();
  options.reflector.resync_period = std::chrono::minutes(1);
  SharedInformer informer(f.client.get(), options);
  std::mutex mu;
  std::condition_variable cv;
  int updates = 0;
  EventHandler h;
  h.on_update = [&](const Object& old_obj, const Object& new_obj) {
    CHECK(old_obj == new_obj);
    std::lock_guard<std::mutex> l(mu);
    ++updates;
    cv.notify_all();
  };
  informer.AddEventHandler(h);
  informer.Start();
  f.transport->WaitForHeldStream();
  f.clock.Advance(std::chrono::minutes(1));
  {
    std::unique_lock<std::mutex> l(mu);
    REQUIRE(cv.wait_for(l, std::chrono::seconds(10), [&] { return updates == 1; }));
  }
  informer.Stop();
}

TEST_CASE("SharedInformer: a compact transform keeps small typed objects", "[informer]") {
  Fixture f;
  std::string pod = R"({"metadata":{"name":"p1","namespace":"ns","resourceVersion":"5"},
    "spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},
    "status":{"phase":"Pending"}})";
  f.transport->AddJson(
      "GET", "/api/v1/namespaces/ns/pods?limit=500", 200,
      fmt::format(R"({{"metadata":{{"resourceVersion":"7"}},"items":[{}]}})", pod));
  f.transport->AddStream("/api/v1/namespaces/ns/pods?watch=true*", Held());
  InformerOptions options = f.Options();
  options.source.resource = client::Pods();
  options.transform = CompactPodTransform();
  SharedInformer informer(f.client.get(), options);
  informer.Start();
  f.transport->WaitForHeldStream();
  informer.Stop();
  Object p = informer.store().Get("ns/p1");
  REQUIRE(p.Is<api::CompactPod>());
  CHECK(p.As<api::CompactPod>().node_name == "n1");
}

TEST_CASE("SharedInformerFactory: one informer per resource, namespace, selectors and transform",
          "[informer]") {
  Fixture f;
  SharedInformerFactory factory(f.client.get());
  SharedInformer* pods = factory.InformerFor(client::Pods());
  CHECK(factory.InformerFor(client::Pods()) == pods);
  CHECK(factory.InformerFor(client::Pods(), "ns") != pods);
  // Designated initializers may name only what they need.
  InformerOptions compact{.source = {.resource = client::Pods()},
                          .transform = CompactPodTransform()};
  SharedInformer* compact_pods = factory.InformerFor(compact);
  CHECK(compact_pods != pods);
  CHECK(factory.InformerFor(compact) == compact_pods);
  InformerOptions selected;
  selected.source.resource = client::Pods();
  selected.source.label_selector = "app=x";
  CHECK(factory.InformerFor(selected) != pods);
  CHECK(factory.size() == 4);

  // A later request adds its indexers to the shared informer.
  InformerOptions indexed;
  indexed.source.resource = client::Pods();
  indexed.indexers[kLabelIndex] = LabelIndexFunc();
  CHECK(factory.InformerFor(indexed) == pods);
  CHECK(pods->store().IndexValues(kLabelIndex).ok());
}

TEST_CASE("SharedInformerFactory: Start starts every informer and WaitForCacheSync waits for all",
          "[informer]") {
  Fixture f;
  f.transport->AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  f.transport->AddStream(kWatchPrefix, Held());
  f.transport->AddJson("GET", "/api/v1/nodes?limit=500", 200,
                       R"({"metadata":{"resourceVersion":"10"},"items":[]})");
  f.transport->AddStream("/api/v1/nodes?watch=true*", Held());
  ReflectorOptions defaults;
  defaults.clock = &f.clock;
  SharedInformerFactory factory(f.client.get(), defaults);
  SharedInformer* cms = factory.InformerFor(client::ConfigMaps(), "ns");
  factory.Start();
  SharedInformer* nodes = factory.InformerFor(client::Nodes());  // started on creation
  CHECK(nodes->started());
  REQUIRE(factory.WaitForCacheSync(std::stop_token(), std::chrono::seconds(10)));
  CHECK(cms->store().size() == 1);
  factory.Shutdown();
}

}  // namespace
}  // namespace basalt::informer
