#include "common/informer/reflector.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "common/util/clock.h"
#include "fmt/format.h"
#include "unit-tests/common/informer/test_objects.h"

namespace basalt::informer {
namespace {

using client::FakeTransport;
using std::chrono::milliseconds;
using testing::BookmarkLine;
using testing::GoneLine;
using testing::ListBody;
using testing::MakeConfigMap;
using testing::WatchLine;

constexpr char kListPath[] = "/api/v1/namespaces/ns/configmaps?limit=500";
constexpr char kWatchPrefix[] = "/api/v1/namespaces/ns/configmaps?watch=true*";

// Records what the reflector tells it, one line per call.
class RecordingSink : public ReflectorSink {
 public:
  void OnReplace(std::vector<Object> objects, std::string rv) override {
    std::string keys;
    for (const Object& o : objects) keys += (keys.empty() ? "" : ",") + o.key();
    Record(fmt::format("replace {} [{}]", rv, keys));
  }
  void OnUpsert(Object obj, std::string rv) override {
    Record(fmt::format("upsert {} {}", obj.key(), rv));
  }
  void OnDelete(std::string key, Object final_state, std::string rv) override {
    Record(fmt::format("delete {} {} {}", key, final_state ? "final" : "unknown", rv));
  }
  void OnBookmark(std::string rv) override { Record(fmt::format("bookmark {}", rv)); }
  void OnResync() override { Record("resync"); }

  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }
  // Blocks until `n` calls were recorded (fails the test after 10 s rather than hanging).
  bool WaitForCalls(size_t n) const {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(10), [&] { return calls_.size() >= n; });
  }

 private:
  void Record(std::string s) {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back(std::move(s));
    cv_.notify_all();
  }
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::string> calls_;
};

// A reflector on ConfigMaps in "ns" over a FakeTransport, with a FakeClock, no jitter, and
// its backoff waits recorded.
class Harness {
 public:
  explicit Harness(ReflectorOptions options = {}, Transform transform = Transform()) {
    auto fake = std::make_unique<FakeTransport>();
    transport_ = fake.get();
    client_ = std::make_unique<client::Client>(std::move(fake));
    options.clock = &clock_;
    options.jitter = 0;
    if (!options.random) options.random = [] { return 0.0; };
    options.on_backoff = [this](Clock::Duration d) {
      std::lock_guard<std::mutex> l(mu_);
      backoffs_.push_back(std::chrono::duration_cast<milliseconds>(d));
      cv_.notify_all();
    };
    reflector_ = std::make_unique<Reflector>(client_.get(),
                                             ListWatchSource{client::ConfigMaps(), "ns", "", ""},
                                             std::move(transform), &sink_, std::move(options));
  }
  ~Harness() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { reflector_->Run(); });
  }
  void Stop() {
    reflector_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  // Blocks until `n` backoff waits have begun.
  bool WaitForBackoffs(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(10), [&] { return backoffs_.size() >= n; });
  }
  std::vector<milliseconds> backoffs() {
    std::lock_guard<std::mutex> l(mu_);
    return backoffs_;
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const client::Request& r : transport_->requests()) out.push_back(r.path);
    return out;
  }

  FakeTransport& transport() { return *transport_; }
  FakeClock& clock() { return clock_; }
  RecordingSink& sink() { return sink_; }
  Reflector& reflector() { return *reflector_; }

 private:
  FakeClock clock_;
  FakeTransport* transport_;
  std::unique_ptr<client::Client> client_;
  RecordingSink sink_;
  std::unique_ptr<Reflector> reflector_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<milliseconds> backoffs_;
};

FakeTransport::StreamScript Held(std::vector<std::string> lines = {}) {
  FakeTransport::StreamScript s;
  s.chunks = std::move(lines);
  s.hold_until_cancelled = true;
  return s;
}
FakeTransport::StreamScript Ends(std::vector<std::string> lines) {
  FakeTransport::StreamScript s;
  s.chunks = std::move(lines);
  return s;
}

std::string Cm(std::string name, std::string rv) {
  return MakeConfigMap("ns", std::move(name)).ResourceVersion(std::move(rv)).Json();
}

TEST_CASE("Reflector: lists in pages of 500, then watches from the list's resourceVersion",
          "[reflector]") {
  ReflectorOptions options;
  options.random = [] { return 0.5; };
  Harness h(options);
  h.transport().AddJson("GET", kListPath, 200, ListBody("11", {Cm("a", "3"), Cm("b", "4")}, "c1"));
  h.transport().AddJson("GET", std::string(kListPath) + "&continue=c1", 200,
                        ListBody("12", {Cm("c", "5")}));
  h.transport().AddStream(
      kWatchPrefix, Held({WatchLine("ADDED", Cm("d", "13")), WatchLine("MODIFIED", Cm("a", "14")),
                          WatchLine("DELETED", Cm("b", "15")), BookmarkLine("16")}));
  h.Start();
  h.transport().WaitForHeldStream();
  h.Stop();

  CHECK(h.sink().calls() == std::vector<std::string>{
                                "replace 12 [ns/a,ns/b,ns/c]",
                                "upsert ns/d 13",
                                "upsert ns/a 14",
                                "delete ns/b final 15",
                                "bookmark 16",
                            });
  std::vector<std::string> paths = h.paths();
  REQUIRE(paths.size() == 3);
  // Bookmarks requested; timeoutSeconds = 300 * (1 + 0.5): within [5 min, 10 min).
  CHECK(paths[2] ==
        "/api/v1/namespaces/ns/configmaps?watch=true&resourceVersion=12&allowWatchBookmarks=true"
        "&timeoutSeconds=450");
  ReflectorStats stats = h.reflector().stats();
  CHECK(stats.lists == 1);
  CHECK(stats.watches == 1);
  CHECK(stats.events == 4);
  CHECK(stats.resource_version == "16");
  CHECK(h.backoffs().empty());
}

TEST_CASE(
    "Reflector: when the server ends a watch it resumes from the last resourceVersion "
    "(a bookmark's included) without relisting",
    "[reflector]") {
  Harness h;
  h.transport().AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  h.transport().AddStream(kWatchPrefix,
                          Ends({WatchLine("MODIFIED", Cm("a", "11")), BookmarkLine("20")}));
  h.transport().AddStream(kWatchPrefix, Ends({WatchLine("ADDED", Cm("b", "21"))}));
  h.transport().AddStream(kWatchPrefix, Held());
  h.Start();
  h.transport().WaitForHeldStream();
  h.Stop();

  std::vector<std::string> paths = h.paths();
  REQUIRE(paths.size() == 4);
  CHECK(paths[1].find("resourceVersion=10&") != std::string::npos);
  CHECK(paths[2].find("resourceVersion=20&") != std::string::npos);
  CHECK(paths[3].find("resourceVersion=21&") != std::string::npos);
  CHECK(h.sink().calls() == std::vector<std::string>{"replace 10 [ns/a]", "upsert ns/a 11",
                                                     "bookmark 20", "upsert ns/b 21"});
  CHECK(h.reflector().stats().lists == 1);
  CHECK(h.backoffs().empty());  // a watch that delivered events is resumed at once
}

TEST_CASE("Reflector: 410 Gone on the watch relists at once and watches from the new list",
          "[reflector]") {
  Harness h;
  h.transport().AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3"), Cm("b", "4")}));
  h.transport().AddStream(kWatchPrefix, Ends({WatchLine("ADDED", Cm("c", "11")), GoneLine()}));
  h.transport().AddJson("GET", kListPath, 200, ListBody("30", {Cm("a", "25"), Cm("d", "29")}));
  h.transport().AddStream(kWatchPrefix, Held());
  h.Start();
  h.transport().WaitForHeldStream();
  h.Stop();

  CHECK(h.sink().calls() == std::vector<std::string>{"replace 10 [ns/a,ns/b]", "upsert ns/c 11",
                                                     "replace 30 [ns/a,ns/d]"});
  std::vector<std::string> paths = h.paths();
  REQUIRE(paths.size() == 4);
  CHECK(paths[2] == kListPath);  // a fresh, consistent list (no resourceVersion)
  CHECK(paths[3].find("resourceVersion=30&") != std::string::npos);
  ReflectorStats stats = h.reflector().stats();
  CHECK(stats.expired == 1);
  CHECK(stats.lists == 2);
  CHECK(h.backoffs().empty());
}

TEST_CASE(
    "Reflector: a watch line that is not JSON is logged, and the reflector backs off, relists "
    "and watches from the new list",
    "[reflector]") {
  Harness h;
  h.transport().AddJson("GET", kListPath, 200, ListBody("10", {}));
  h.transport().AddStream(kWatchPrefix,
                          Ends({WatchLine("ADDED", Cm("a", "11")), "<html>proxy error</html>\n",
                                WatchLine("ADDED", Cm("never", "12"))}));
  h.transport().AddJson("GET", kListPath, 200, ListBody("13", {Cm("a", "11"), Cm("b", "13")}));
  h.transport().AddStream(kWatchPrefix, Held());
  h.Start();
  REQUIRE(h.WaitForBackoffs(1));
  CHECK(h.paths().size() == 2);  // nothing more until the clock moves
  h.clock().Advance(h.backoffs()[0]);
  h.transport().WaitForHeldStream();
  h.Stop();

  // The event after the bad line is never applied; the relist brings the truth.
  CHECK(h.sink().calls() ==
        std::vector<std::string>{"replace 10 []", "upsert ns/a 11", "replace 13 [ns/a,ns/b]"});
  std::vector<std::string> paths = h.paths();
  REQUIRE(paths.size() == 4);
  CHECK(paths[2] == kListPath);
  CHECK(paths[3].find("resourceVersion=13&") != std::string::npos);
  ReflectorStats stats = h.reflector().stats();
  CHECK(stats.watch_failures == 1);
  CHECK(stats.malformed == 1);
  CHECK(stats.lists == 2);
  CHECK(stats.expired == 0);
}

TEST_CASE(
    "Reflector: a stream that keeps sending bad lines backs off further each time, "
    "relisting every time",
    "[reflector]") {
  Harness h;
  FakeTransport& t = h.transport();
  for (int i = 0; i < 3; ++i) {
    t.AddJson("GET", kListPath, 200, ListBody("10", {}));
    t.AddStream(kWatchPrefix, Ends({WatchLine("ADDED", Cm("a", "11")), "{\"type\":\"ADDED\"}\n"}));
  }
  t.AddJson("GET", kListPath, 200, ListBody("10", {}));
  t.AddStream(kWatchPrefix, Held());
  h.Start();
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(h.WaitForBackoffs(i + 1));
    h.clock().Advance(h.backoffs()[i]);
  }
  t.WaitForHeldStream();
  h.Stop();
  // Events before each bad line do not reset the backoff: it doubles.
  CHECK(h.backoffs() ==
        std::vector<milliseconds>{milliseconds(800), milliseconds(1600), milliseconds(3200)});
  CHECK(h.reflector().stats().lists == 4);
  CHECK(h.reflector().stats().malformed == 3);
}

TEST_CASE(
    "Reflector: failures back off exponentially on the injected clock up to the cap, and "
    "a healthy watch resets the backoff",
    "[reflector]") {
  ReflectorOptions options;
  options.max_backoff = std::chrono::seconds(2);
  Harness h(options);
  FakeTransport& t = h.transport();
  t.AddJson("GET", kListPath, 500, R"({"kind":"Status","code":500,"message":"etcd down"})");
  t.AddJson("GET", kListPath, 200, ListBody("10", {}));
  FakeTransport::StreamScript refused;
  refused.error = absl::UnavailableError("connection refused");
  t.AddStream(kWatchPrefix, refused);
  FakeTransport::StreamScript unavailable;
  unavailable.status_code = 503;
  unavailable.body = R"({"kind":"Status","code":503,"message":"try later"})";
  t.AddStream(kWatchPrefix, unavailable);
  t.AddStream(kWatchPrefix, Ends({WatchLine("ADDED", Cm("a", "11"))}));  // healthy
  t.AddStream(kWatchPrefix, refused);
  t.AddStream(kWatchPrefix, Held());
  h.Start();

  const std::vector<milliseconds> expected = {milliseconds(800), milliseconds(1600),
                                              milliseconds(2000), milliseconds(800)};
  const std::vector<size_t> requests_before_wait = {1, 3, 4, 6};
  for (size_t i = 0; i < expected.size(); ++i) {
    REQUIRE(h.WaitForBackoffs(i + 1));
    CHECK(h.backoffs()[i] == expected[i]);
    // The reflector is parked on the clock: no request until it moves.
    CHECK(h.paths().size() == requests_before_wait[i]);
    h.clock().Advance(h.backoffs()[i] - milliseconds(1));
    h.clock().Advance(milliseconds(1));
  }
  t.WaitForHeldStream();
  h.Stop();
  CHECK(h.paths().size() == 7);
  CHECK(h.reflector().stats().backoffs == 4);
  CHECK(h.reflector().stats().list_failures == 1);
}

TEST_CASE("Reflector: Stop ends a backoff wait without the clock moving", "[reflector]") {
  Harness h;
  h.transport().AddJson("GET", kListPath, 403, R"({"kind":"Status","code":403})");
  h.Start();
  REQUIRE(h.WaitForBackoffs(1));
  h.Stop();  // returns: the join would hang otherwise
  CHECK(h.sink().calls().empty());
}

TEST_CASE("Reflector: resync re-delivers on every period of the clock", "[reflector]") {
  ReflectorOptions options;
  options.resync_period = std::chrono::seconds(30);
  Harness h(options);
  h.transport().AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3")}));
  h.transport().AddStream(kWatchPrefix, Held());
  h.Start();
  h.transport().WaitForHeldStream();
  h.clock().Advance(std::chrono::seconds(30));
  REQUIRE(h.sink().WaitForCalls(2));
  h.clock().Advance(std::chrono::seconds(30));
  REQUIRE(h.sink().WaitForCalls(3));
  h.Stop();
  CHECK(h.sink().calls() == std::vector<std::string>{"replace 10 [ns/a]", "resync", "resync"});
}

TEST_CASE(
    "Reflector: objects the Transform rejects are skipped, but their deletion still "
    "reaches the sink",
    "[reflector]") {
  Transform picky = Transform::To<std::string>(
      "picky", [](json::Document&& d) -> absl::StatusOr<std::shared_ptr<const std::string>> {
        std::string name(json::GetString(*json::Find(d, "metadata"), "name"));
        if (name == "bad") return absl::InvalidArgumentError("bad object");
        return std::make_shared<const std::string>(name);
      });
  Harness h({}, picky);
  h.transport().AddJson("GET", kListPath, 200, ListBody("10", {Cm("a", "3"), Cm("bad", "4")}));
  h.transport().AddStream(kWatchPrefix, Held({WatchLine("MODIFIED", Cm("bad", "11")),
                                              WatchLine("DELETED", Cm("bad", "12"))}));
  h.Start();
  h.transport().WaitForHeldStream();
  h.Stop();
  CHECK(h.sink().calls() ==
        std::vector<std::string>{"replace 10 [ns/a]", "delete ns/bad unknown 12"});
  CHECK(h.reflector().stats().rejected == 3);
}

}  // namespace
}  // namespace basalt::informer
