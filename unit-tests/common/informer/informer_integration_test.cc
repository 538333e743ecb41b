// SharedInformer against the real API server of the test cluster (BASALT_TEST_KUBECONFIG,
// BASALT_TEST_CLUSTER_DIR). Each test works in its own fresh namespace.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/api/compact.h"
#include "common/client/client.h"
#include "common/client/config.h"
#include "common/client/https_transport.h"
#include "common/informer/informer_factory.h"
#include "common/informer/shared_informer.h"
#include "common/informer/transforms.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::informer {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Wraps the real transport so a test can cut the current watch and hold reconnections back,
// as a network partition would. Requests other than watches pass straight through.
class GatedTransport : public client::Transport {
 public:
  explicit GatedTransport(std::unique_ptr<client::Transport> inner) : inner_(std::move(inner)) {}

  absl::StatusOr<client::Response> Do(const client::Request& request) override {
    return inner_->Do(request);
  }
  absl::StatusOr<client::Response> Stream(const client::Request& request,
                                          const client::LineCallback& on_line,
                                          client::CancelToken* cancel) override {
    // A watch held at the closed gate is woken by Open() or by its own cancellation (the
    // informer stopping), not by polling. Cancel() runs the canceller under the token's lock,
    // so the flag is ours and the token is not read with mu_ held.
    bool cancelled = false;
    if (cancel != nullptr) {
      cancel->SetCanceller([this, &cancelled] {
        {
          std::lock_guard<std::mutex> l(mu_);
          cancelled = true;
        }
        cv_.notify_all();
      });
    }
    {
      std::unique_lock<std::mutex> l(mu_);
      while (closed_ && !cancelled) {
        ++blocked_;
        cv_.notify_all();
        cv_.wait(l);
        --blocked_;
      }
    }
    if (cancel != nullptr) cancel->ClearCanceller();  // the inner transport sets its own
    {
      std::lock_guard<std::mutex> l(mu_);
      active_ = cancel;
      watch_paths_.push_back(request.path);
    }
    cv_.notify_all();
    absl::StatusOr<client::Response> r = inner_->Stream(request, on_line, cancel);
    std::lock_guard<std::mutex> l(mu_);
    active_ = nullptr;
    return r;
  }

  // Ends the current watch and blocks new ones until Open().
  void CloseAndCut() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    if (active_ != nullptr) active_->Cancel();
  }
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = false;
    cv_.notify_all();
  }
  // Blocks until a watch waits at the closed gate.
  bool WaitForBlockedWatch(milliseconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return blocked_ > 0; });
  }
  std::vector<std::string> watch_paths() {
    std::lock_guard<std::mutex> l(mu_);
    return watch_paths_;
  }
  // Blocks until more than `n` watches have started (each reconnection is one).
  bool WaitForWatchesAfter(size_t n, milliseconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return watch_paths_.size() > n; });
  }
  size_t watch_count() {
    std::lock_guard<std::mutex> l(mu_);
    return watch_paths_.size();
  }

 private:
  std::unique_ptr<client::Transport> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  int blocked_ = 0;
  client::CancelToken* active_ = nullptr;
  std::vector<std::string> watch_paths_;
};

client::RestConfig LoadConfig() {
  client::KubeconfigOptions options;
  options.paths = {Env("BASALT_TEST_KUBECONFIG")};
  absl::StatusOr<client::RestConfig> config = client::LoadKubeconfig(options);
  if (!config.ok()) FAIL("kubeconfig: " << config.status().ToString());
  config->qps = 500;
  config->burst = 1000;
  return *config;
}

std::unique_ptr<client::Client> NewClient(GatedTransport** gate = nullptr) {
  client::RestConfig config = LoadConfig();
  absl::StatusOr<std::unique_ptr<client::Transport>> t = client::NewTransport(config);
  if (!t.ok()) FAIL("transport: " << t.status().ToString());
  if (gate == nullptr) return std::make_unique<client::Client>(*std::move(t));
  auto gated = std::make_unique<GatedTransport>(*std::move(t));
  *gate = gated.get();
  return std::make_unique<client::Client>(std::move(gated));
}

// A fresh namespace, deleted at the end of the test.
class TestNamespace {
 public:
  explicit TestNamespace(client::Client* client, std::string_view prefix) : client_(client) {
    std::mt19937 rng(std::random_device{}());
    name_ = fmt::format("{}-{:06x}", prefix, rng() & 0xffffff);
    auto created = client_->Create(
        client::Namespaces(), "",
        fmt::format(R"({{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"{}"}}}})",
                    name_));
    if (!created.ok()) FAIL("create namespace: " << created.status().ToString());
  }
  ~TestNamespace() { (void)client_->Delete(client::Namespaces(), "", name_); }
  const std::string& name() const { return name_; }

 private:
  client::Client* client_;
  std::string name_;
};

std::string ConfigMapJson(std::string_view name, std::string_view value) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{}","labels":{{"test":"informer"}}}},"data":{{"k":"{}"}}}})",
      name, value);
}

void CreateConfigMap(client::Client* c, const std::string& ns, std::string_view name,
                     std::string_view value = "v1") {
  auto r = c->Create(client::ConfigMaps(), ns, ConfigMapJson(name, value));
  if (!r.ok()) FAIL("create configmap " << name << ": " << r.status().ToString());
}

// Collects handler calls as "add a", "update a v1->v2", "delete a final|unknown" (names only)
// and lets the test wait for a condition on them.
class Recorder {
 public:
  EventHandler Handler() {
    EventHandler h;
    h.on_add = [this](const Object& o) { Add(fmt::format("add {}", o.name())); };
    h.on_update = [this](const Object& a, const Object& b) {
      if (a == b) return;  // resync
      Add(fmt::format("update {} {}->{}", b.name(), Data(a), Data(b)));
    };
    h.on_delete = [this](const Object& o, bool unknown) {
      Add(fmt::format("delete {} {}", o.name(), unknown ? "unknown" : "final"));
    };
    return h;
  }
  bool WaitFor(const std::function<bool(const std::vector<std::string>&)>& pred,
               seconds timeout = seconds(30)) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return pred(lines_); });
  }
  bool WaitForLine(const std::string& line, seconds timeout = seconds(30)) {
    return WaitFor(
        [&](const std::vector<std::string>& ls) {
          return std::find(ls.begin(), ls.end(), line) != ls.end();
        },
        timeout);
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> l(mu_);
    return lines_;
  }

 private:
  // data.k of a ConfigMap, metadata.annotations.k of a PodTemplate.
  static std::string Data(const Object& o) {
    const json::Value* data = json::Find(o.doc(), "data");
    if (data == nullptr) data = json::FindPath(o.doc(), {"metadata", "annotations"});
    return data != nullptr ? std::string(json::GetString(*data, "k")) : "";
  }
  void Add(std::string s) {
    std::lock_guard<std::mutex> l(mu_);
    lines_.push_back(std::move(s));
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

// PodTemplates skip the test cluster's watch cache (e2e/cluster/up.sh), so compacting etcd
// makes the API server answer 410 Gone for an older resourceVersion at once.
client::ResourceRef PodTemplates() {
  client::ResourceRef r;
  r.version = "v1";
  r.resource = "podtemplates";
  r.kind = "PodTemplate";
  return r;
}

void CreatePodTemplate(client::Client* c, const std::string& ns, std::string_view name,
                       std::string_view value = "v1") {
  auto r = c->Create(
      PodTemplates(), ns,
      fmt::format(
          R"({{"apiVersion":"v1","kind":"PodTemplate","metadata":{{"name":"{}","labels":{{"test":"informer"}},"annotations":{{"k":"{}"}}}},)"
          R"("template":{{"spec":{{"containers":[{{"name":"c","image":"busybox"}}]}}}}}})",
          name, value));
  if (!r.ok()) FAIL("create podtemplate " << name << ": " << r.status().ToString());
}

InformerOptions ConfigMapOptions(const std::string& ns) {
  InformerOptions o;
  o.source.resource = client::ConfigMaps();
  o.source.namespace_name = ns;
  o.source.label_selector = "test=informer";  // not the kube-root-ca.crt the controller adds
  return o;
}

// --- etcd ----------------------------------------------------------------------------------

std::string EtcdUrl() {
  std::string dir = Env("BASALT_TEST_CLUSTER_DIR");
  if (dir.empty()) {  // the kubeconfig lives in the cluster's state dir
    std::string kubeconfig = Env("BASALT_TEST_KUBECONFIG");
    dir = kubeconfig.substr(0, kubeconfig.rfind('/'));
  }
  std::ifstream in(dir + "/cluster.env");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ETCD_URL=", 0) == 0) return line.substr(9);
  }
  return "";
}

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

int64_t EtcdRevision(const std::string& url) {
  std::string out =
      Run(fmt::format("curl -sS -X POST {}/v3/kv/range -d '{{\"key\":\"AA==\"}}'", url));
  absl::StatusOr<json::Document> doc = json::Parse(out);
  if (!doc.ok()) return -1;
  const json::Value* header = json::Find(*doc, "header");
  if (header == nullptr) return -1;
  std::string_view rev = json::GetString(*header, "revision");
  return rev.empty() ? -1 : std::stoll(std::string(rev));
}

bool EtcdCompact(const std::string& url, int64_t revision) {
  std::string out = Run(fmt::format(
      "curl -sS -X POST {}/v3/kv/compaction -d '{{\"revision\":\"{}\",\"physical\":true}}'", url,
      revision));
  return out.find("\"header\"") != std::string::npos;
}

// Whether the API server still serves a watch from `rv` (false once it answers 410 Gone).
bool ServerServesWatchFrom(client::Client* c, const client::ResourceRef& resource,
                           const std::string& ns, const std::string& rv) {
  client::ListOptions o;
  o.resource_version = rv;
  o.timeout_seconds = 1;
  o.label_selector = "test=informer";
  client::CancelToken cancel;
  absl::Status s = c->Watch(
      resource, ns, o,
      [&](client::WatchEvent&&) {
        cancel.Cancel();
        return absl::OkStatus();
      },
      &cancel);
  return s.code() != absl::StatusCode::kOutOfRange;
}

// Waits until object `name` exists in `ns`: a LIST, then a watch from its resourceVersion
// until the object is added (the server ends the watch at the deadline). False on timeout.
bool WaitForObject(client::Client* c, const client::ResourceRef& resource, const std::string& ns,
                   const std::string& name, seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  client::ListOptions o;
  o.field_selector = fmt::format("metadata.name={}", name);
  while (std::chrono::steady_clock::now() < deadline) {
    absl::StatusOr<client::ObjectList> list = c->List(resource, ns, o);
    if (!list.ok()) FAIL("list " << name << ": " << list.status().ToString());
    if (!list->items.empty()) return true;
    client::ListOptions w = o;
    w.resource_version = list->resource_version;
    w.timeout_seconds = std::max<int64_t>(
        1,
        std::chrono::duration_cast<seconds>(deadline - std::chrono::steady_clock::now()).count());
    bool added = false;
    absl::Status s = c->Watch(resource, ns, w, [&](client::WatchEvent&& e) {
      added = e.type == client::WatchEventType::kAdded;
      return added ? absl::CancelledError("added") : absl::OkStatus();
    });
    if (added) return true;
    if (!s.ok() && s.code() != absl::StatusCode::kOutOfRange) {
      FAIL("watch " << name << ": " << s.ToString());
    }
  }
  return false;
}

// The one wait on real time in these tests: a watch of nothing, which the server ends after
// timeoutSeconds=1, the shortest it allows. Used only where the condition is the age of
// the API server's watch cache, which no event reports.
void WaitOneServerSecond(client::Client* c, const client::ResourceRef& resource,
                         const std::string& ns) {
  client::ListOptions o;
  o.field_selector = "metadata.name=no-such-object";
  o.timeout_seconds = 1;
  o.allow_watch_bookmarks = false;
  (void)c->Watch(resource, ns, o, [](client::WatchEvent&&) { return absl::OkStatus(); });
}

// --- tests ---------------------------------------------------------------------------------

TEST_CASE("Informer: configmaps in a fresh namespace are seen added, updated and deleted",
          "[informer][integration]") {
  std::unique_ptr<client::Client> c = NewClient();
  TestNamespace ns(c.get(), "informer-crud");
  CreateConfigMap(c.get(), ns.name(), "before");

  SharedInformer informer(c.get(), ConfigMapOptions(ns.name()));
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  REQUIRE(informer.WaitForCacheSync(std::stop_token(), milliseconds(30000)));
  CHECK(rec.lines() == std::vector<std::string>{"add before"});

  CreateConfigMap(c.get(), ns.name(), "a");
  REQUIRE(rec.WaitForLine("add a"));
  REQUIRE(c->Patch(client::ConfigMaps(), ns.name(), "a", client::PatchType::kMerge,
                   R"({"data":{"k":"v2"}})")
              .ok());
  REQUIRE(rec.WaitForLine("update a v1->v2"));
  CHECK(json::GetString(*json::Find(informer.store().Get(ns.name() + "/a").doc(), "data"), "k") ==
        "v2");
  REQUIRE(c->Delete(client::ConfigMaps(), ns.name(), "a").ok());
  REQUIRE(rec.WaitForLine("delete a final"));
  CHECK_FALSE(informer.store().Get(ns.name() + "/a"));
  CHECK(informer.store().size() == 1);
  CHECK(rec.lines() ==
        std::vector<std::string>{"add before", "add a", "update a v1->v2", "delete a final"});
  informer.Stop();
  CHECK(informer.stats().lists == 1);
}

TEST_CASE(
    "Informer: watches the server ends (short timeoutSeconds) resume without missing or "
    "repeating events",
    "[informer][integration]") {
  GatedTransport* gate = nullptr;  // never closed: it counts the watches
  std::unique_ptr<client::Client> c = NewClient(&gate);
  TestNamespace ns(c.get(), "informer-resume");
  InformerOptions options = ConfigMapOptions(ns.name());
  options.reflector.min_watch_timeout = seconds(1);  // the server closes each watch in 1-2 s
  SharedInformer informer(c.get(), options);
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  REQUIRE(informer.WaitForCacheSync(std::stop_token(), milliseconds(30000)));

  // Spread over several watches: after each batch of 5, wait until the server has ended the
  // watch (timeoutSeconds of 1-2 s) and the informer has resumed with a new one.
  constexpr int kCount = 25;
  for (int i = 0; i < kCount; ++i) {
    if (i % 5 == 0) REQUIRE(gate->WaitForWatchesAfter(gate->watch_count(), milliseconds(30000)));
    CreateConfigMap(c.get(), ns.name(), fmt::format("cm-{:02}", i));
  }
  REQUIRE(rec.WaitFor([](const std::vector<std::string>& ls) { return ls.size() >= kCount; }));
  informer.Stop();
  std::vector<std::string> lines = rec.lines();
  std::set<std::string> unique(lines.begin(), lines.end());
  CHECK(lines.size() == kCount);
  CHECK(unique.size() == kCount);
  CHECK(informer.store().size() == kCount);
  ReflectorStats stats = informer.stats();
  CHECK(stats.lists == 1);  // resumed, never relisted
  CHECK(stats.expired == 0);
  CHECK(stats.watches >= 3);
}

TEST_CASE(
    "Informer: after etcd compaction the reconnecting informer gets 410 Gone and relists, with "
    "tombstones for what it missed",
    "[informer][integration][slow]") {
  const std::string etcd = EtcdUrl();
  REQUIRE_FALSE(etcd.empty());
  GatedTransport* gate = nullptr;
  std::unique_ptr<client::Client> c = NewClient(&gate);
  std::unique_ptr<client::Client> admin = NewClient();
  TestNamespace ns(admin.get(), "informer-gone");
  TestNamespace churn(admin.get(), "informer-churn");
  CreatePodTemplate(admin.get(), ns.name(), "kept");
  CreatePodTemplate(admin.get(), ns.name(), "doomed");

  InformerOptions options = ConfigMapOptions(ns.name());
  options.source.resource = PodTemplates();
  options.reflector.initial_backoff = milliseconds(100);
  options.reflector.max_backoff = milliseconds(500);
  SharedInformer informer(c.get(), options);
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  REQUIRE(informer.WaitForCacheSync(std::stop_token(), milliseconds(30000)));
  CreatePodTemplate(admin.get(), ns.name(), "seen");
  REQUIRE(rec.WaitForLine("add seen"));

  // Partition: the watch is cut and reconnections wait at the gate.
  gate->CloseAndCut();
  REQUIRE(gate->WaitForBlockedWatch(milliseconds(30000)));
  const std::string stale_rv = informer.LastSyncResourceVersion();
  REQUIRE_FALSE(stale_rv.empty());

  // Changes the informer misses.
  REQUIRE(admin->Delete(PodTemplates(), ns.name(), "doomed").ok());
  CreatePodTemplate(admin.get(), ns.name(), "missed");
  REQUIRE(admin
              ->Patch(PodTemplates(), ns.name(), "kept", client::PatchType::kMerge,
                      R"({"metadata":{"annotations":{"k":"v2"}}})")
              .ok());

  // Compact etcd past the informer's revision.
  const int64_t revision = EtcdRevision(etcd);
  REQUIRE(revision > std::stoll(stale_rv));
  REQUIRE(EtcdCompact(etcd, revision));

  // Without a watch cache (the test cluster's setting for PodTemplates) the API server
  // answers 410 at once. On a cluster that caches them, the cache still replays from memory
  // what etcd has compacted until its events are older than its freshness window (75 s) and
  // newer ones push them out: churn it and ask again (each round paced by a 1 s server-side
  // watch timeout, since the cache's age is real time and no event reports it) until the
  // server answers 410, for at most 180 s.
  bool gone = !ServerServesWatchFrom(admin.get(), PodTemplates(), ns.name(), stale_rv);
  if (!gone) {
    WARN("the API server caches PodTemplates: waiting for its watch cache to move past " +
         stale_rv);
    const auto deadline = std::chrono::steady_clock::now() + seconds(180);
    for (int batch = 0; !gone && std::chrono::steady_clock::now() < deadline; ++batch) {
      for (int i = 0; i < 20; ++i) {
        CreatePodTemplate(admin.get(), churn.name(), fmt::format("churn-{}-{}", batch, i));
      }
      gone = !ServerServesWatchFrom(admin.get(), PodTemplates(), ns.name(), stale_rv);
      if (!gone) WaitOneServerSecond(admin.get(), PodTemplates(), churn.name());
    }
  }
  REQUIRE(gone);

  // Reconnect: the resumed watch gets 410 and the informer relists.
  gate->Open();
  REQUIRE(rec.WaitForLine("delete doomed unknown", seconds(60)));
  REQUIRE(rec.WaitForLine("add missed"));
  REQUIRE(rec.WaitForLine("update kept v1->v2"));
  ReflectorStats stats = informer.stats();
  CHECK(stats.expired >= 1);
  CHECK(stats.lists >= 2);
  std::vector<std::string> keys = informer.store().Keys();
  std::sort(keys.begin(), keys.end());
  CHECK(keys ==
        std::vector<std::string>{ns.name() + "/kept", ns.name() + "/missed", ns.name() + "/seen"});
  // The watch after the relist works: a new object arrives as an add.
  CreatePodTemplate(admin.get(), ns.name(), "after");
  REQUIRE(rec.WaitForLine("add after"));
  informer.Stop();
  bool resumed_with_stale = false;
  for (const std::string& p : gate->watch_paths()) {
    if (p.find("resourceVersion=" + stale_rv + "&") != std::string::npos) resumed_with_stale = true;
  }
  CHECK(resumed_with_stale);
}

TEST_CASE("Informer: pods in all namespaces sync (documents and compact structs)",
          "[informer][integration]") {
  std::unique_ptr<client::Client> c = NewClient();
  TestNamespace ns(c.get(), "informer-pods");
  // The namespace's default ServiceAccount appears shortly after the namespace; pod admission
  // needs it.
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},
    "spec":{"schedulerName":"volcano","containers":[{"name":"c","image":"busybox",
    "resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}]}})";
  REQUIRE(WaitForObject(c.get(), client::ServiceAccounts(), ns.name(), "default", seconds(20)));
  absl::Status created = c->Create(client::Pods(), ns.name(), pod).status();
  INFO(created.ToString());
  REQUIRE(created.ok());

  SharedInformerFactory factory(c.get());
  SharedInformer* docs = factory.InformerFor(client::Pods());
  InformerOptions compact;
  compact.source.resource = client::Pods();
  compact.transform = CompactPodTransform();
  SharedInformer* small = factory.InformerFor(compact);
  factory.Start();
  REQUIRE(factory.WaitForCacheSync(std::stop_token(), milliseconds(30000)));
  CHECK(docs->HasSynced());
  CHECK(small->HasSynced());
  CHECK_FALSE(docs->LastSyncResourceVersion().empty());
  Object p = small->store().Get(ns.name() + "/p1");
  REQUIRE(p);
  CHECK(p.As<api::CompactPod>().scheduler_name == "volcano");
  CHECK(docs->store().Get(ns.name() + "/p1").Is<json::Document>());
  CHECK(docs->store().size() == small->store().size());
  factory.Shutdown();
}

}  // namespace
}  // namespace basalt::informer
