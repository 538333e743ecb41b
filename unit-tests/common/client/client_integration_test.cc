// Integration tests of basalt_client against the real kube-apiserver of the test cluster
// (CTest fixture "cluster"; the admin kubeconfig is in $BASALT_TEST_KUBECONFIG). Every test
// works in its own namespace and cleans up after itself.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <sys/socket.h>
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
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "common/client/client.h"
#include "common/client/config.h"
#include "common/client/https_transport.h"
#include "common/client/retry.h"
#include "common/util/clock.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

using basalt::MessageOf;
using namespace basalt::client;
namespace json = basalt::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

namespace {

RestConfig TestConfig() {
  const char* path = getenv("BASALT_TEST_KUBECONFIG");
  if (path == nullptr || *path == '\0') {
    FAIL(
        "BASALT_TEST_KUBECONFIG is not set: run through ctest (fixture \"cluster\") or set it "
        "to the kubeconfig of e2e/cluster/up.sh");
  }
  absl::StatusOr<RestConfig> config = LoadKubeconfig({{path}, true, ""});
  INFO(MessageOf(config.status()));
  REQUIRE(config.ok());
  return *config;
}

std::unique_ptr<Client> NewClient(RestConfig config) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::FromConfig(config);
  INFO(MessageOf(client.status()));
  REQUIRE(client.ok());
  return *std::move(client);
}

// Waits until `done` holds for object `name` (null when it does not exist): a GET, then a watch
// of that one object from the GET's resourceVersion until an event makes `done` true. The
// server ends each watch at the deadline (timeoutSeconds). False on timeout.
bool WaitForObject(Client& client, const ResourceRef& ref, const std::string& ns,
                   const std::string& name, steady_clock::duration timeout,
                   const std::function<bool(const json::Value*)>& done) {
  const auto deadline = steady_clock::now() + timeout;
  while (steady_clock::now() < deadline) {
    ListOptions options;
    options.field_selector = fmt::format("metadata.name={}", name);
    absl::StatusOr<ObjectList> list = client.List(ref, ns, options);
    INFO(MessageOf(list.status()));
    REQUIRE(list.ok());
    if (done(list->items.empty() ? nullptr : &list->items[0])) return true;
    options.resource_version = list->resource_version;
    options.timeout_seconds = std::max<int64_t>(
        1, std::chrono::duration_cast<seconds>(deadline - steady_clock::now()).count());
    bool met = false;
    absl::Status s = client.Watch(ref, ns, options, [&](WatchEvent&& e) {
      if (e.type == WatchEventType::kBookmark) return absl::OkStatus();
      met = done(e.type == WatchEventType::kDeleted ? nullptr : &e.object);
      return met ? absl::CancelledError("done") : absl::OkStatus();
    });
    if (met) return true;
    INFO(MessageOf(s));
    REQUIRE((s.ok() || s.code() == absl::StatusCode::kOutOfRange));  // ended: list again
  }
  return false;
}

std::string_view Meta(const json::Value& obj, std::string_view field) {
  const json::Value* meta = json::Find(obj, "metadata");
  return meta == nullptr ? std::string_view() : json::GetString(*meta, field);
}

std::string_view DataValue(const json::Value& cm, std::string_view key) {
  const json::Value* data = json::Find(cm, "data");
  return data == nullptr ? std::string_view() : json::GetString(*data, key);
}

#define REQUIRE_OK(expr)               \
  do {                                 \
    absl::Status require_ok_ = (expr); \
    INFO(MessageOf(require_ok_));      \
    REQUIRE(require_ok_.ok());         \
  } while (0)

// A namespace of its own for one test, deleted at the end.
class TestNamespace {
 public:
  explicit TestNamespace(Client& client) : client_(client) {
    name_ = fmt::format("client-it-{}-{}", getpid(),
                        steady_clock::now().time_since_epoch().count() % 100000);
    REQUIRE_OK(client_
                   .Create(Namespaces(), "",
                           fmt::format(R"({{"apiVersion":"v1","kind":"Namespace",)"
                                       R"("metadata":{{"name":"{}"}}}})",
                                       name_))
                   .status());
  }
  ~TestNamespace() { (void)client_.Delete(Namespaces(), "", name_); }
  const std::string& name() const { return name_; }

 private:
  Client& client_;
  std::string name_;
};

std::string ConfigMapJson(std::string_view name, std::string_view app, int idx) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{}","labels":{{"app":"{}"}}}},)"
      R"("data":{{"idx":"{}"}}}})",
      name, app, idx);
}

std::string PodJson(std::string_view name) {
  // schedulerName nobody serves: the test binds the pod itself.
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","labels":{{"app":"it"}}}},)"
      R"("spec":{{"schedulerName":"basalt-it-nobody","containers":[{{"name":"c","image":"busybox"}}],)"
      R"("tolerations":[{{"operator":"Exists"}}]}}}})",
      name);
}

std::string FirstNodeName(Client& client) {
  absl::StatusOr<ObjectList> nodes = client.ListAll(Nodes(), "");
  REQUIRE(nodes.ok());
  REQUIRE_FALSE(nodes->items.empty());
  return std::string(Meta(nodes->items[0], "name"));
}

}  // namespace

TEST_CASE(
    "configmaps: create, get, list with pages and selectors, update, conflict, patch, "
    "delete with preconditions",
    "[integration][client]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  TestNamespace ns(*client);

  for (int i = 0; i < 5; ++i) {
    REQUIRE_OK(
        client->Create(ConfigMaps(), ns.name(), ConfigMapJson(fmt::format("cm-{}", i), "it", i))
            .status());
  }
  REQUIRE_OK(client->Create(ConfigMaps(), ns.name(), ConfigMapJson("other", "other", 9)).status());
  absl::Status dup =
      client->Create(ConfigMaps(), ns.name(), ConfigMapJson("cm-0", "it", 0)).status();
  REQUIRE(absl::IsAlreadyExists(dup));

  // One page of 2 with a label selector, then all pages.
  ListOptions options;
  options.label_selector = "app=it";
  options.limit = 2;
  absl::StatusOr<ObjectList> page = client->List(ConfigMaps(), ns.name(), options);
  REQUIRE(page.ok());
  REQUIRE(page->items.size() == 2);
  REQUIRE_FALSE(page->continue_token.empty());
  REQUIRE_FALSE(page->resource_version.empty());
  REQUIRE(json::GetString(page->items[0], "kind") == "ConfigMap");
  absl::StatusOr<ObjectList> all = client->ListAll(ConfigMaps(), ns.name(), options, 2);
  REQUIRE(all.ok());
  REQUIRE(all->items.size() == 5);
  REQUIRE(all->continue_token.empty());
  ListOptions by_field;
  by_field.field_selector = "metadata.name=cm-3";
  absl::StatusOr<ObjectList> one = client->List(ConfigMaps(), ns.name(), by_field);
  REQUIRE(one.ok());
  REQUIRE(one->items.size() == 1);
  REQUIRE(DataValue(one->items[0], "idx") == "3");

  // Update with the current resourceVersion, then again with the stale one.
  absl::StatusOr<json::Document> cm = client->Get(ConfigMaps(), ns.name(), "cm-0");
  REQUIRE(cm.ok());
  std::string stale = json::Serialize(*cm);
  json::Set(json::EnsureObject(*cm, "data", cm->GetAllocator()), "idx",
            json::MakeString("updated", cm->GetAllocator()), cm->GetAllocator());
  absl::StatusOr<json::Document> updated = client->Update(ConfigMaps(), json::Serialize(*cm));
  REQUIRE(updated.ok());
  REQUIRE(DataValue(*updated, "idx") == "updated");
  REQUIRE(Meta(*updated, "resourceVersion") != Meta(*cm, "resourceVersion"));
  absl::Status conflict = client->Update(ConfigMaps(), stale).status();
  REQUIRE(conflict.code() == absl::StatusCode::kAborted);
  REQUIRE(IsConflict(conflict));
  REQUIRE(ReasonOf(conflict) == "Conflict");

  // RetryOnConflict turns the read-modify-write into a success.
  int attempts = 0;
  REQUIRE_OK(RetryOnConflict([&]() -> absl::Status {
    ++attempts;
    // The first attempt writes the stale copy on purpose.
    if (attempts == 1) return client->Update(ConfigMaps(), stale).status();
    BASALT_ASSIGN_OR_RETURN(json::Document fresh, client->Get(ConfigMaps(), ns.name(), "cm-0"));
    json::Set(json::EnsureObject(fresh, "data", fresh.GetAllocator()), "rmw",
              json::MakeString("yes", fresh.GetAllocator()), fresh.GetAllocator());
    return client->Update(ConfigMaps(), json::Serialize(fresh)).status();
  }));
  REQUIRE(attempts == 2);

  // Three patch types.
  absl::StatusOr<json::Document> merged =
      client->Patch(ConfigMaps(), ns.name(), "cm-1", PatchType::kMerge, R"({"data":{"m":"1"}})");
  REQUIRE(merged.ok());
  REQUIRE(DataValue(*merged, "m") == "1");
  absl::StatusOr<json::Document> jsonpatched =
      client->Patch(ConfigMaps(), ns.name(), "cm-1", PatchType::kJsonPatch,
                    R"([{"op":"replace","path":"/data/idx","value":"jp"}])");
  REQUIRE(jsonpatched.ok());
  REQUIRE(DataValue(*jsonpatched, "idx") == "jp");
  absl::StatusOr<json::Document> strategic =
      client->Patch(ConfigMaps(), ns.name(), "cm-1", PatchType::kStrategicMerge,
                    R"({"metadata":{"labels":{"s":"yes"}}})");
  REQUIRE(strategic.ok());
  REQUIRE(DataValue(*strategic, "m") == "1");
  absl::Status bad_patch = client
                               ->Patch(ConfigMaps(), ns.name(), "cm-1", PatchType::kJsonPatch,
                                       R"([{"op":"test","path":"/data/idx","value":"no"}])")
                               .status();
  REQUIRE_FALSE(bad_patch.ok());
  REQUIRE(HttpCodeOf(bad_patch) >= 400);

  // Delete with preconditions: a wrong UID or stale resourceVersion is a conflict.
  absl::StatusOr<json::Document> cm2 = client->Get(ConfigMaps(), ns.name(), "cm-2");
  REQUIRE(cm2.ok());
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  REQUIRE(IsConflict(client->Delete(ConfigMaps(), ns.name(), "cm-2", wrong_uid)));
  DeleteOptions stale_rv;
  stale_rv.precondition_resource_version = "1";
  REQUIRE(IsConflict(client->Delete(ConfigMaps(), ns.name(), "cm-2", stale_rv)));
  DeleteOptions right;
  right.precondition_uid = std::string(Meta(*cm2, "uid"));
  right.propagation_policy = "Background";
  right.grace_period_seconds = 0;
  REQUIRE_OK(client->Delete(ConfigMaps(), ns.name(), "cm-2", right));
  REQUIRE(absl::IsNotFound(client->Get(ConfigMaps(), ns.name(), "cm-2").status()));
  REQUIRE(absl::IsNotFound(client->Delete(ConfigMaps(), ns.name(), "cm-2")));
}

TEST_CASE("pods: create, bind, status subresource, eviction", "[integration][client]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  TestNamespace ns(*client);
  std::string node = FirstNodeName(*client);

  absl::StatusOr<json::Document> pod = client->Create(Pods(), ns.name(), PodJson("p1"));
  INFO(MessageOf(pod.status()));
  REQUIRE(pod.ok());
  std::string uid(Meta(*pod, "uid"));

  // A binding with another pod's UID is refused; the right one binds.
  REQUIRE_FALSE(client->Bind(ns.name(), "p1", node, "00000000-0000-0000-0000-000000000000").ok());
  REQUIRE_OK(client->Bind(ns.name(), "p1", node, uid));
  absl::StatusOr<json::Document> bound = client->Get(Pods(), ns.name(), "p1");
  REQUIRE(bound.ok());
  const json::Value* node_name = json::FindPath(*bound, {"spec", "nodeName"});
  REQUIRE(node_name != nullptr);
  REQUIRE(json::AsView(*node_name) == node);
  absl::Status again = client->Bind(ns.name(), "p1", node);
  REQUIRE(again.code() == absl::StatusCode::kAborted);
  REQUIRE(HttpCodeOf(again) == 409);

  // Status subresource: a condition written with PUT /status, then with a merge patch.
  REQUIRE_OK(RetryOnConflict([&]() -> absl::Status {
    BASALT_ASSIGN_OR_RETURN(json::Document p, client->Get(Pods(), ns.name(), "p1"));
    auto& a = p.GetAllocator();
    json::Value& status = json::EnsureObject(p, "status", a);
    json::Value* conditions = json::FindMutable(status, "conditions");
    if (conditions == nullptr || !conditions->IsArray()) {
      json::Set(status, "conditions", json::Value(rapidjson::kArrayType), a);
      conditions = json::FindMutable(status, "conditions");
    }
    json::Value cond(rapidjson::kObjectType);
    json::Set(cond, "type", json::MakeString("basalt.dev/Tested", a), a);
    json::Set(cond, "status", json::MakeString("True", a), a);
    conditions->PushBack(cond, a);
    return client->UpdateStatus(Pods(), json::Serialize(p)).status();
  }));
  absl::StatusOr<json::Document> with_status = client->Get(Pods(), ns.name(), "p1", "status");
  REQUIRE(with_status.ok());
  REQUIRE(json::Serialize(*with_status).find("basalt.dev/Tested") != std::string::npos);
  absl::StatusOr<json::Document> patched =
      client->Patch(Pods(), ns.name(), "p1", PatchType::kMerge,
                    R"({"status":{"message":"patched by basalt"}})", "status");
  REQUIRE(patched.ok());
  REQUIRE(json::Serialize(*patched).find("patched by basalt") != std::string::npos);

  // Eviction through policy/v1.
  REQUIRE_OK(client->Create(Pods(), ns.name(), PodJson("p2")).status());
  DeleteOptions grace;
  grace.grace_period_seconds = 0;
  REQUIRE_OK(client->Evict(ns.name(), "p2", grace));
  absl::StatusOr<json::Document> evicted = client->Get(Pods(), ns.name(), "p2");
  REQUIRE((absl::IsNotFound(evicted.status()) ||
           (evicted.ok() && !Meta(*evicted, "deletionTimestamp").empty())));
  REQUIRE(absl::IsNotFound(client->Evict(ns.name(), "no-such-pod")));
}

TEST_CASE("nodes: cluster-scoped get, list and label patch", "[integration][client]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  std::string node = FirstNodeName(*client);
  absl::StatusOr<json::Document> got = client->Get(Nodes(), "", node);
  REQUIRE(got.ok());
  REQUIRE(Meta(*got, "name") == node);
  absl::StatusOr<json::Document> labelled =
      client->Patch(Nodes(), "", node, PatchType::kStrategicMerge,
                    R"({"metadata":{"labels":{"client-it.basalt.dev/touched":"yes"}}})");
  REQUIRE(labelled.ok());
  ListOptions options;
  options.label_selector = "client-it.basalt.dev/touched=yes";
  absl::StatusOr<ObjectList> list = client->List(Nodes(), "", options);
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 1);
  REQUIRE_OK(client
                 ->Patch(Nodes(), "", node, PatchType::kMerge,
                         R"({"metadata":{"labels":{"client-it.basalt.dev/touched":null}}})")
                 .status());
  REQUIRE(absl::IsNotFound(client->Get(Nodes(), "", "no-such-node").status()));
}

TEST_CASE(
    "watch: resume from a resourceVersion sees later changes only, a too old one is "
    "kOutOfRange",
    "[integration][client][watch]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  TestNamespace ns(*client);
  absl::StatusOr<json::Document> a =
      client->Create(ConfigMaps(), ns.name(), ConfigMapJson("a", "w", 1));
  REQUIRE(a.ok());
  std::string from(Meta(*a, "resourceVersion"));
  REQUIRE_OK(client->Create(ConfigMaps(), ns.name(), ConfigMapJson("b", "w", 2)).status());
  REQUIRE_OK(client->Patch(ConfigMaps(), ns.name(), "b", PatchType::kMerge, R"({"data":{"x":"y"}})")
                 .status());
  REQUIRE_OK(client->Delete(ConfigMaps(), ns.name(), "a"));

  ListOptions options;
  options.resource_version = from;
  options.timeout_seconds = 30;
  options.label_selector = "app=w";  // not kube-root-ca.crt, which the controller-manager adds
  std::vector<std::string> seen;
  absl::Status s = client->Watch(ConfigMaps(), ns.name(), options, [&](WatchEvent&& e) {
    if (e.type == WatchEventType::kBookmark) return absl::OkStatus();
    seen.push_back(fmt::format("{} {}", WatchEventTypeName(e.type), Meta(e.object, "name")));
    return seen.size() == 3 ? absl::CancelledError("done") : absl::OkStatus();
  });
  REQUIRE(s.code() == absl::StatusCode::kCancelled);
  REQUIRE(seen == std::vector<std::string>{"ADDED b", "MODIFIED b", "DELETED a"});

  // Resuming from a compacted resourceVersion must surface as kOutOfRange (relist). The API
  // server compacts etcd every 5 minutes, so on a younger cluster revision 1 may still be
  // served; then the watch simply ends at timeoutSeconds.
  ListOptions too_old;
  too_old.resource_version = "1";
  too_old.timeout_seconds = 2;
  absl::Status expired = client->Watch(ConfigMaps(), ns.name(), too_old,
                                       [](WatchEvent&&) { return absl::OkStatus(); });
  INFO(MessageOf(expired));
  if (expired.ok()) {
    WARN("resourceVersion 1 is not compacted yet on this young cluster; 410 path not exercised");
  } else {
    REQUIRE(expired.code() == absl::StatusCode::kOutOfRange);
    REQUIRE(IsGone(expired));
    WARN(fmt::format("watch from resourceVersion 1: {}", MessageOf(expired)));
  }
}

TEST_CASE("watch: a CRD is created, its objects watched from another thread, and deleted",
          "[integration][client][watch]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  TestNamespace ns(*client);
  std::string plural = fmt::format("widgets{}", getpid());
  std::string crd_name = plural + ".it.basalt.dev";
  std::string crd = fmt::format(
      R"({{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",)"
      R"("metadata":{{"name":"{0}"}},"spec":{{"group":"it.basalt.dev","scope":"Namespaced",)"
      R"("names":{{"plural":"{1}","singular":"{1}x","kind":"Widget{2}","listKind":"Widget{2}List"}},)"
      R"("versions":[{{"name":"v1","served":true,"storage":true,"subresources":{{"status":{{}}}},)"
      R"("schema":{{"openAPIV3Schema":{{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}}]}}}})",
      crd_name, plural, getpid());
  REQUIRE_OK(client->Create(CustomResourceDefinitions(), "", crd).status());

  // Wait for Established, watching the CRD.
  REQUIRE(WaitForObject(
      *client, CustomResourceDefinitions(), "", crd_name, seconds(30), [](const json::Value* crd) {
        return crd != nullptr &&
               json::Serialize(*crd).find(R"("type":"Established","status":"True")") !=
                   std::string::npos;
      }));

  ResourceRef widgets{"it.basalt.dev", "v1", plural, true, fmt::format("Widget{}", getpid())};
  std::string widget = fmt::format(
      R"({{"apiVersion":"it.basalt.dev/v1","kind":"Widget{}","metadata":{{"name":"w1"}},)"
      R"("spec":{{"size":1}}}})",
      getpid());
  // The new resource can take a moment to be served after Established, and no event says when
  // it is: a retry after NotFound waits on a watch of the CRD, which ends at its next change
  // or at timeoutSeconds=1 (the shortest the server allows), for at most 30 s.
  absl::Status created;
  const auto served_by = steady_clock::now() + seconds(30);
  while (true) {
    created = client->Create(widgets, ns.name(), widget).status();
    if (!absl::IsNotFound(created) || steady_clock::now() >= served_by) break;
    ListOptions next;
    next.field_selector = fmt::format("metadata.name={}", crd_name);
    next.resource_version.push_back('0');  // "0": the CRD as cached, then changes
    next.timeout_seconds = 1;
    bool initial = true;
    (void)client->Watch(CustomResourceDefinitions(), "", next, [&](WatchEvent&& e) {
      if (e.type == WatchEventType::kBookmark) return absl::OkStatus();
      if (std::exchange(initial, false)) return absl::OkStatus();  // the CRD as it is
      return absl::CancelledError("changed");
    });
  }
  REQUIRE_OK(created);
  absl::StatusOr<ObjectList> list = client->List(widgets, ns.name());
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 1);

  CancelToken cancel;
  std::mutex mu;
  std::condition_variable seen_cv;
  std::vector<std::string> seen;
  absl::Status watch_result;
  ListOptions options;
  options.resource_version = list->resource_version;
  std::thread watcher([&] {
    watch_result = client->Watch(
        widgets, ns.name(), options,
        [&](WatchEvent&& e) {
          if (e.type != WatchEventType::kBookmark) {
            std::lock_guard<std::mutex> l(mu);
            seen.push_back(
                fmt::format("{} {}", WatchEventTypeName(e.type), Meta(e.object, "name")));
            seen_cv.notify_all();
          }
          return absl::OkStatus();
        },
        &cancel);
  });
  REQUIRE_OK(client->Patch(widgets, ns.name(), "w1", PatchType::kMerge, R"({"spec":{"size":2}})")
                 .status());
  REQUIRE_OK(client
                 ->Patch(widgets, ns.name(), "w1", PatchType::kMerge,
                         R"({"status":{"ready":true}})", "status")
                 .status());
  REQUIRE_OK(client->Delete(widgets, ns.name(), "w1"));
  {
    std::unique_lock<std::mutex> l(mu);
    seen_cv.wait_for(l, seconds(20), [&] { return seen.size() >= 3; });
  }
  cancel.Cancel();
  watcher.join();
  REQUIRE(watch_result.ok());
  REQUIRE(seen == std::vector<std::string>{"MODIFIED w1", "MODIFIED w1", "DELETED w1"});
  REQUIRE_OK(client->Delete(CustomResourceDefinitions(), "", crd_name));
}

TEST_CASE("TLS: a wrong CA or server name fails the handshake with a clear error",
          "[integration][client]") {
  RestConfig config = TestConfig();
  RestConfig wrong_ca = config;
  wrong_ca.ca_pem = config.client_cert_pem;  // a certificate that did not sign the server's
  std::unique_ptr<Client> client = NewClient(wrong_ca);
  absl::Status s = client->Get(Namespaces(), "", "default").status();
  INFO(MessageOf(s));
  WARN(MessageOf(s));
  REQUIRE(s.code() == absl::StatusCode::kFailedPrecondition);  // not retried
  REQUIRE(MessageOf(s).find("TLS handshake with 127.0.0.1") != std::string_view::npos);
  REQUIRE(MessageOf(s).find("certificate verify failed") != std::string_view::npos);
  REQUIRE(MessageOf(s).find("certificate-authority") != std::string_view::npos);

  RestConfig wrong_name = config;
  wrong_name.tls_server_name = "not-the-apiserver.example.com";
  s = NewClient(wrong_name)->Get(Namespaces(), "", "default").status();
  INFO(MessageOf(s));
  WARN(MessageOf(s));
  REQUIRE(s.code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(MessageOf(s).find("not-the-apiserver.example.com") != std::string_view::npos);

  RestConfig no_client_cert = config;
  no_client_cert.client_cert_pem.clear();
  no_client_cert.client_key_pem.clear();
  s = NewClient(no_client_cert)->Get(Namespaces(), "", "default").status();
  INFO(MessageOf(s));
  REQUIRE((s.code() == absl::StatusCode::kUnauthenticated ||
           s.code() == absl::StatusCode::kPermissionDenied));

  RestConfig insecure = config;
  insecure.ca_pem.clear();
  insecure.insecure_skip_tls_verify = true;
  REQUIRE_OK(NewClient(insecure)->Get(Namespaces(), "", "default").status());
}

TEST_CASE("concurrency: 32 threads GET at once over the connection pool", "[integration][client]") {
  RestConfig config = TestConfig();
  config.qps = 0;  // measure the transport, not the limiter
  std::unique_ptr<Client> client = NewClient(config);
  TestNamespace ns(*client);
  REQUIRE_OK(client->Create(ConfigMaps(), ns.name(), ConfigMapJson("shared", "c", 1)).status());
  constexpr int kThreads = 32;
  constexpr int kPerThread = 20;
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  auto start = steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<json::Document> cm = client->Get(ConfigMaps(), ns.name(), "shared");
        if (cm.ok() && DataValue(*cm, "idx") == "1") {
          ++ok;
        } else {
          ++failed;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double secs = std::chrono::duration<double>(steady_clock::now() - start).count();
  WARN(fmt::format("{} GETs from {} threads in {:.2f}s ({:.0f}/s)", kThreads * kPerThread, kThreads,
                   secs, kThreads * kPerThread / secs));
  REQUIRE(failed == 0);
  REQUIRE(ok == kThreads * kPerThread);
}

TEST_CASE("rate limit: the default 50 qps / 100 burst paces a burst of 150 GETs",
          "[integration][client]") {
  RestConfig config = TestConfig();
  config.qps = 50;
  config.burst = 100;
  std::unique_ptr<Client> client = NewClient(config);
  auto start = steady_clock::now();
  for (int i = 0; i < 150; ++i) REQUIRE_OK(client->Get(Namespaces(), "", "default").status());
  double secs = std::chrono::duration<double>(steady_clock::now() - start).count();
  WARN(fmt::format("150 GETs at qps 50 burst 100 took {:.2f}s", secs));
  REQUIRE(secs >= 0.9);  // 50 requests beyond the burst at 50/s
}

TEST_CASE("large bodies: a 9 MB LIST and watch stream pass Beast's default 8 MB limit",
          "[integration][client][watch]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  TestNamespace ns(*client);
  const std::string big(900 * 1024, 'x');
  absl::StatusOr<ObjectList> before = client->List(ConfigMaps(), ns.name());
  REQUIRE(before.ok());
  for (int i = 0; i < 10; ++i) {
    REQUIRE_OK(
        client
            ->Create(ConfigMaps(), ns.name(),
                     fmt::format(R"({{"metadata":{{"name":"big-{}","labels":{{"app":"big"}}}},)"
                                 R"("data":{{"blob":"{}"}}}})",
                                 i, big))
            .status());
  }
  ListOptions selector;
  selector.label_selector = "app=big";
  absl::StatusOr<ObjectList> list = client->List(ConfigMaps(), ns.name(), selector);
  INFO(MessageOf(list.status()));
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 10);
  REQUIRE(DataValue(list->items[9], "blob").size() == big.size());

  ListOptions from = selector;
  from.resource_version = before->resource_version;
  from.timeout_seconds = 30;
  size_t bytes = 0;
  int events = 0;
  absl::Status s = client->Watch(ConfigMaps(), ns.name(), from, [&](WatchEvent&& e) {
    if (e.type != WatchEventType::kAdded) return absl::OkStatus();
    bytes += DataValue(e.object, "blob").size();
    return ++events == 10 ? absl::CancelledError("all seen") : absl::OkStatus();
  });
  REQUIRE(s.code() == absl::StatusCode::kCancelled);
  REQUIRE(bytes == 10 * big.size());
}

TEST_CASE("HttpsTransport: a refused connection is kUnavailable naming the endpoint",
          "[integration][client]") {
  RestConfig config;
  config.server = "https://127.0.0.1:1";  // nothing listens on port 1
  auto t = NewHttpsTransport(config);
  REQUIRE(t.ok());
  Request request;
  request.path = "/version";
  auto r = (*t)->Do(request);
  REQUIRE(r.status().code() == absl::StatusCode::kUnavailable);
  REQUIRE(std::string(r.status().message()).find("connecting to 127.0.0.1:1") != std::string::npos);
}

TEST_CASE("HttpsTransport: a watch silent for longer than stream_idle_timeout fails",
          "[integration][client][watch]") {
  RestConfig config = TestConfig();
  auto transport = NewHttpsTransport(config);
  REQUIRE(transport.ok());
  Request request;
  // A namespace with no config maps and no bookmarks requested: nothing will arrive.
  request.path = "/api/v1/namespaces/client-it-empty/configmaps?watch=true";
  request.stream_idle_timeout = milliseconds(500);
  auto start = steady_clock::now();
  auto r = (*transport)
               ->Stream(
                   request, [](std::string_view) { return absl::OkStatus(); }, nullptr);
  double secs = std::chrono::duration<double>(steady_clock::now() - start).count();
  INFO(MessageOf(r.status()));
  REQUIRE(r.status().code() == absl::StatusCode::kDeadlineExceeded);
  REQUIRE(secs < 5);
}

namespace {

std::string PodWithTwoContainers(std::string_view name) {
  // ignore-sigterm: KWOK keeps the pod Terminating for its grace period after a delete.
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}",)"
      R"("annotations":{{"basalt.dev/ignore-sigterm":"true"}}}},)"
      R"("spec":{{"schedulerName":"basalt-it-nobody","tolerations":[{{"operator":"Exists"}}],)"
      R"("containers":[{{"name":"c1","image":"busybox:1.35"}},{{"name":"c2","image":"busybox:1.35"}}]}}}})",
      name);
}

std::string ContainerImages(const json::Value& pod) {
  std::string out;
  const json::Value* containers = json::FindPath(pod, {"spec", "containers"});
  if (containers == nullptr || !containers->IsArray()) return out;
  for (const json::Value& c : containers->GetArray()) {
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", json::GetString(c, "name"),
                       json::GetString(c, "image"));
  }
  return out;
}

void WriteFile(const std::string& path, std::string_view text) {
  FILE* f = fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  REQUIRE(fwrite(text.data(), 1, text.size(), f) == text.size());
  fclose(f);
}

// RS256 signature of `input` with the PEM private key, base64url without padding (JWS).
std::string SignRs256(std::string_view input, const std::string& key_pem) {
  BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  REQUIRE(bio != nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  REQUIRE(key != nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  REQUIRE(EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1);
  size_t len = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(input.data());
  REQUIRE(EVP_DigestSign(ctx, nullptr, &len, data, input.size()) == 1);
  std::string sig(len, '\0');
  REQUIRE(EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len, data,
                         input.size()) == 1);
  sig.resize(len);
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  std::string out;
  absl::WebSafeBase64Escape(sig, &out);
  return out;
}

// Re-signs a service-account JWT with the cluster's signing key, its times shifted by
// `shift_seconds` (negative: into the past). A shift of 0 reproduces a valid token.
std::string ResignToken(std::string_view token, int64_t shift_seconds, const std::string& key_pem) {
  size_t dot1 = token.find('.');
  size_t dot2 = token.find('.', dot1 + 1);
  REQUIRE(dot2 != std::string_view::npos);
  std::string header(token.substr(0, dot1));
  std::string payload_json;
  REQUIRE(absl::WebSafeBase64Unescape(std::string(token.substr(dot1 + 1, dot2 - dot1 - 1)),
                                      &payload_json));
  absl::StatusOr<json::Document> payload = json::Parse(payload_json);
  REQUIRE(payload.ok());
  for (const char* claim : {"exp", "iat", "nbf"}) {
    json::Value* v = json::FindMutable(*payload, claim);
    REQUIRE(v != nullptr);
    REQUIRE(v->IsInt64());
    v->SetInt64(v->GetInt64() + shift_seconds);
  }
  std::string encoded;
  absl::WebSafeBase64Escape(json::Serialize(*payload), &encoded);
  std::string input = header + "." + encoded;
  return input + "." + SignRs256(input, key_pem);
}

std::string ClusterPki(std::string_view file) {
  const char* kubeconfig = getenv("BASALT_TEST_KUBECONFIG");
  REQUIRE(kubeconfig != nullptr);
  std::string dir(kubeconfig);
  dir = dir.substr(0, dir.rfind('/'));
  return dir + "/pki/" + std::string(file);
}

}  // namespace

TEST_CASE(
    "pods: strategic merge patch merges containers by name, delete keeps the grace period "
    "asked for",
    "[integration][client]") {
  std::unique_ptr<Client> client = NewClient(TestConfig());
  TestNamespace ns(*client);
  std::string node = FirstNodeName(*client);
  absl::StatusOr<json::Document> pod = client->Create(Pods(), ns.name(), PodWithTwoContainers("p"));
  INFO(MessageOf(pod.status()));
  REQUIRE(pod.ok());
  const std::string uid(Meta(*pod, "uid"));
  REQUIRE_OK(client->Bind(ns.name(), "p", node, uid));

  // Strategic merge: the list of containers merges on "name", so only c2 changes.
  constexpr std::string_view kNewImage =
      R"({"spec":{"containers":[{"name":"c2","image":"busybox:1.36"}]}})";
  absl::StatusOr<json::Document> strategic =
      client->Patch(Pods(), ns.name(), "p", PatchType::kStrategicMerge, kNewImage);
  INFO(MessageOf(strategic.status()));
  REQUIRE(strategic.ok());
  CHECK(ContainerImages(*strategic) == "c1=busybox:1.35,c2=busybox:1.36");
  // The same body as a JSON merge patch replaces the whole list, dropping c1: the server
  // refuses (containers cannot be removed from a pod), and nothing changes.
  absl::Status merge = client->Patch(Pods(), ns.name(), "p", PatchType::kMerge, kNewImage).status();
  INFO(MessageOf(merge));
  CHECK(merge.code() == absl::StatusCode::kInvalidArgument);
  CHECK(HttpCodeOf(merge) == 422);
  absl::StatusOr<json::Document> after = client->Get(Pods(), ns.name(), "p");
  REQUIRE(after.ok());
  CHECK(ContainerImages(*after) == "c1=busybox:1.35,c2=busybox:1.36");

  // Delete with a grace period: the bound pod stays, marked with that period.
  DeleteOptions graceful;
  graceful.grace_period_seconds = 45;
  graceful.precondition_uid = uid;
  REQUIRE_OK(client->Delete(Pods(), ns.name(), "p", graceful));
  absl::StatusOr<json::Document> terminating = client->Get(Pods(), ns.name(), "p");
  REQUIRE(terminating.ok());
  CHECK_FALSE(Meta(*terminating, "deletionTimestamp").empty());
  const json::Value* grace =
      json::FindPath(*terminating, {"metadata", "deletionGracePeriodSeconds"});
  REQUIRE(grace != nullptr);
  CHECK(grace->GetInt64() == 45);
  // A shorter grace period may follow; 0 removes it without waiting.
  DeleteOptions now;
  now.grace_period_seconds = 0;
  REQUIRE_OK(client->Delete(Pods(), ns.name(), "p", now));
  CHECK(WaitForObject(*client, Pods(), ns.name(), "p", seconds(20),
                      [](const json::Value* pod) { return pod == nullptr; }));
  CHECK(absl::IsNotFound(client->Get(Pods(), ns.name(), "p").status()));
}

// Creates service account `name` in `ns` and returns a token for it (TokenRequest, 1 h).
std::string ServiceAccountToken(Client& client, const std::string& ns, const std::string& name) {
  REQUIRE_OK(client
                 .Create(ServiceAccounts(), ns,
                         fmt::format(R"({{"apiVersion":"v1","kind":"ServiceAccount",)"
                                     R"("metadata":{{"name":"{}"}}}})",
                                     name))
                 .status());
  absl::StatusOr<json::Document> request =
      client.CreateSubresource(ServiceAccounts(), ns, name, "token",
                               R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",)"
                               R"("spec":{"expirationSeconds":3600}})");
  REQUIRE_OK(request.status());
  const json::Value* token = json::FindPath(*request, {"status", "token"});
  REQUIRE(token != nullptr);
  return std::string(json::AsView(*token));
}

TEST_CASE(
    "service account tokens: a rotated token file is picked up, a bad or expired token is "
    "kUnauthenticated naming the file",
    "[integration][client]") {
  const RestConfig admin = TestConfig();
  std::unique_ptr<Client> client = NewClient(admin);
  TestNamespace ns(*client);
  const std::string token = ServiceAccountToken(*client, ns.name(), "it-sa");
  const std::string sa_user = fmt::format("system:serviceaccount:{}:it-sa", ns.name());

  char tmpl[] = "/tmp/basalt-token-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string token_file = std::string(tmpl) + "/token";
  WriteFile(token_file, "not-a-token\n");

  RestConfig config;
  config.server = admin.server;
  config.ca_pem = admin.ca_pem;
  config.bearer_token_file = token_file;
  config.source = "test service account";
  basalt::FakeClock clock;
  absl::StatusOr<std::unique_ptr<Transport>> transport = NewHttpsTransport(config, {}, &clock);
  REQUIRE(transport.ok());
  Client sa_client(*std::move(transport));
  auto get = [&] { return sa_client.Get(Namespaces(), "", ns.name()).status(); };

  // A token the server does not know: 401, and the message names the token file.
  absl::Status bad = get();
  INFO(MessageOf(bad));
  WARN(MessageOf(bad));
  REQUIRE(bad.code() == absl::StatusCode::kUnauthenticated);
  CHECK(HttpCodeOf(bad) == 401);
  CHECK(MessageOf(bad).find("bearer token from file " + token_file) != std::string_view::npos);
  CHECK(MessageOf(bad).find(token) == std::string_view::npos);

  // The token is rotated in the file: used once the refresh period (60 s) has passed.
  WriteFile(token_file, token + "\n");
  CHECK(get().code() == absl::StatusCode::kUnauthenticated);  // still the cached one
  clock.Advance(seconds(61));
  absl::Status authenticated = get();
  INFO(MessageOf(authenticated));
  // The service account has no RBAC rights: 403 proves the server authenticated it.
  REQUIRE(authenticated.code() == absl::StatusCode::kPermissionDenied);
  CHECK(MessageOf(authenticated).find(sa_user) != std::string_view::npos);

  // The same claims re-signed with the cluster's key are accepted (the signing below is right)...
  absl::StatusOr<std::string> key = ReadFileToString(ClusterPki("sa.key"));
  REQUIRE(key.ok());
  WriteFile(token_file, ResignToken(token, 0, *key));
  clock.Advance(seconds(61));
  CHECK(get().code() == absl::StatusCode::kPermissionDenied);
  // ...and moved two hours into the past they are an expired token: 401 naming the file.
  WriteFile(token_file, ResignToken(token, -7200, *key));
  clock.Advance(seconds(61));
  absl::Status expired = get();
  INFO(MessageOf(expired));
  WARN(MessageOf(expired));
  REQUIRE(expired.code() == absl::StatusCode::kUnauthenticated);
  CHECK(MessageOf(expired).find(token_file) != std::string_view::npos);
  CHECK(MessageOf(expired).find("expired or revoked token") != std::string_view::npos);

  unlink(token_file.c_str());
  rmdir(tmpl);
}

namespace {

// Counts what the server answered, by HTTP status, before any retry.
class CountingTransport : public Transport {
 public:
  explicit CountingTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
  absl::StatusOr<Response> Do(const Request& request) override {
    absl::StatusOr<Response> r = inner_->Do(request);
    if (r.ok() && r->status_code == 429) {
      ++throttled_;
      if (!r->Header("Retry-After").empty()) ++with_retry_after_;
    }
    return r;
  }
  absl::StatusOr<Response> Stream(const Request& request, const LineCallback& on_line,
                                  CancelToken* cancel) override {
    return inner_->Stream(request, on_line, cancel);
  }
  std::string CredentialsDescription() const override { return inner_->CredentialsDescription(); }
  int throttled() const { return throttled_; }
  int with_retry_after() const { return with_retry_after_; }

 private:
  std::unique_ptr<Transport> inner_;
  std::atomic<int> throttled_{0};
  std::atomic<int> with_retry_after_{0};
};

ResourceRef FlowControl(std::string resource, std::string kind) {
  ResourceRef r;
  r.group = "flowcontrol.apiserver.k8s.io";
  r.version = "v1";
  r.resource = std::move(resource);
  r.namespaced = false;
  r.kind = std::move(kind);
  return r;
}

}  // namespace

TEST_CASE(
    "429: requests API Priority and Fairness rejects are retried after Retry-After and succeed "
    "once, for reads and creates",
    "[integration][client]") {
  const RestConfig admin = TestConfig();
  std::unique_ptr<Client> client = NewClient(admin);
  TestNamespace ns(*client);
  const std::string sa = "throttled";
  const std::string token = ServiceAccountToken(*client, ns.name(), sa);
  ResourceRef role_bindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true, "RoleBinding"};
  REQUIRE_OK(client
                 ->Create(role_bindings, ns.name(),
                          fmt::format(R"({{"apiVersion":"rbac.authorization.k8s.io/v1",)"
                                      R"("kind":"RoleBinding","metadata":{{"name":"edit"}},)"
                                      R"("roleRef":{{"apiGroup":"rbac.authorization.k8s.io",)"
                                      R"("kind":"ClusterRole","name":"edit"}},)"
                                      R"("subjects":[{{"kind":"ServiceAccount","name":"{}",)"
                                      R"("namespace":"{}"}}]}})",
                                      sa, ns.name()))
                 .status());
  // A priority level of one share that may not borrow and rejects instead of queueing (a few
  // seats on this server), and a flow schema that puts only this service account there.
  const ResourceRef levels =
      FlowControl("prioritylevelconfigurations", "PriorityLevelConfiguration");
  const ResourceRef schemas = FlowControl("flowschemas", "FlowSchema");
  const std::string name = ns.name();
  REQUIRE_OK(client
                 ->Create(levels, "",
                          fmt::format(R"({{"apiVersion":"flowcontrol.apiserver.k8s.io/v1",)"
                                      R"("kind":"PriorityLevelConfiguration",)"
                                      R"("metadata":{{"name":"{}"}},"spec":{{"type":"Limited",)"
                                      R"("limited":{{"nominalConcurrencyShares":1,)"
                                      R"("lendablePercent":0,"borrowingLimitPercent":0,)"
                                      R"("limitResponse":{{"type":"Reject"}}}}}}}})",
                                      name))
                 .status());
  REQUIRE_OK(
      client
          ->Create(
              schemas, "",
              fmt::format(R"({{"apiVersion":"flowcontrol.apiserver.k8s.io/v1",)"
                          R"("kind":"FlowSchema","metadata":{{"name":"{0}"}},)"
                          R"("spec":{{"priorityLevelConfiguration":{{"name":"{0}"}},)"
                          R"("matchingPrecedence":100,"distinguisherMethod":{{"type":"ByUser"}},)"
                          R"("rules":[{{"subjects":[{{"kind":"ServiceAccount",)"
                          R"("serviceAccount":{{"namespace":"{0}","name":"{1}"}}}}],)"
                          R"("resourceRules":[{{"verbs":["*"],"apiGroups":["*"],)"
                          R"("resources":["*"],"namespaces":["*"]}}]}}]}}}})",
                          name, sa))
          .status());
  struct Cleanup {
    Client& c;
    ResourceRef levels, schemas;
    std::string name;
    ~Cleanup() {
      (void)c.Delete(schemas, "", name);
      (void)c.Delete(levels, "", name);
    }
  } cleanup{*client, levels, schemas, name};

  // Enough configmaps that a LIST keeps a seat busy for a while.
  const std::string payload(2000, 'x');
  for (int i = 0; i < 200; ++i) {
    REQUIRE_OK(client
                   ->Create(ConfigMaps(), ns.name(),
                            fmt::format(R"({{"apiVersion":"v1","kind":"ConfigMap",)"
                                        R"("metadata":{{"name":"bulk-{}"}},"data":{{"p":"{}"}}}})",
                                        i, payload))
                   .status());
  }
  RestConfig config;
  config.server = admin.server;
  config.ca_pem = admin.ca_pem;
  config.bearer_token = token;
  absl::StatusOr<std::unique_ptr<Transport>> https = NewHttpsTransport(config);
  REQUIRE_OK(https.status());
  auto counting = std::make_unique<CountingTransport>(*std::move(https));
  CountingTransport* counts = counting.get();
  RetryPolicy policy;
  policy.max_retries = 30;  // every thread competes for a few seats after each Retry-After
  Client throttled(std::make_unique<RetryingTransport>(std::move(counting), policy, 0, 1,
                                                       basalt::Clock::Real()));
  // The flow schema takes effect once the API server's APF controller has seen it.
  const auto deadline = steady_clock::now() + seconds(30);
  constexpr int kThreads = 32;
  std::atomic<int> lists_ok{0}, creates_ok{0}, failed{0};
  std::string first_error;
  std::mutex error_mu;
  auto record = [&](const absl::Status& s, std::atomic<int>& ok) {
    if (s.ok()) {
      ++ok;
      return;
    }
    ++failed;
    std::lock_guard<std::mutex> l(error_mu);
    if (first_error.empty()) first_error = std::string(MessageOf(s));
  };
  int rounds = 0;
  const auto start = steady_clock::now();
  while (counts->throttled() == 0 && steady_clock::now() < deadline) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 3; ++i)
          record(throttled.List(ConfigMaps(), ns.name()).status(), lists_ok);
        record(throttled
                   .Create(ConfigMaps(), ns.name(),
                           fmt::format(R"({{"apiVersion":"v1","kind":"ConfigMap",)"
                                       R"("metadata":{{"name":"c-{}-{}"}}}})",
                                       rounds, t))
                   .status(),
               creates_ok);
      });
    }
    for (std::thread& th : threads) th.join();
    ++rounds;
  }
  const double secs = std::chrono::duration<double>(steady_clock::now() - start).count();
  WARN(
      fmt::format("{} rounds, {} LISTs and {} creates ok, {} answers were 429 ({} with "
                  "Retry-After), {:.1f} s",
                  rounds, lists_ok.load(), creates_ok.load(), counts->throttled(),
                  counts->with_retry_after(), secs));
  INFO(first_error);
  REQUIRE(counts->throttled() > 0);  // the server did push back
  CHECK(counts->with_retry_after() == counts->throttled());
  CHECK(failed == 0);
  CHECK(lists_ok == rounds * kThreads * 3);
  CHECK(creates_ok == rounds * kThreads);
  // Each create took effect exactly once: a 429 means the server did not act.
  absl::StatusOr<ObjectList> all = client->List(ConfigMaps(), ns.name());
  REQUIRE_OK(all.status());
  int created = 0;
  for (const json::Document& d : all->items) {
    if (Meta(d, "name").rfind("c-", 0) == 0) ++created;
  }
  CHECK(created == rounds * kThreads);
}

namespace {

// A TCP proxy in front of the API server whose connections can be "restarted" the way an API
// server restart leaves a client's keep-alive pool: Break() drops every upstream connection at
// once; with close_clients the client side is closed too (FIN, as a restarted server's kernel
// does), otherwise it stays open and the next request on it is answered by a close (the race of
// a server closing an idle connection as the client reuses it). Thread-safe.
class BreakableProxy {
 public:
  explicit BreakableProxy(const ServerAddress& upstream) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    REQUIRE(getaddrinfo(upstream.host.c_str(), upstream.port.c_str(), &hints, &upstream_) == 0);
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(listen_fd_, 64) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~BreakableProxy() {
    shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto& c : conns_) {
        shutdown(c->client, SHUT_RDWR);
        shutdown(c->upstream, SHUT_RDWR);
      }
    }
    for (std::thread& t : pumps_) t.join();
    for (auto& c : conns_) {
      close(c->client);
      close(c->upstream);
    }
    close(listen_fd_);
    freeaddrinfo(upstream_);
  }

  int port() const { return port_; }
  int accepted() const { return accepted_; }
  // Requests that arrived on a connection after Break() (each was answered by a close).
  int requests_on_broken() const { return requests_on_broken_; }

  void Break(bool close_clients) {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& c : conns_) {
      if (c->broken.exchange(true)) continue;
      shutdown(c->upstream, SHUT_RDWR);
      if (close_clients) shutdown(c->client, SHUT_RDWR);
    }
  }

 private:
  struct Conn {
    int client = -1;
    int upstream = -1;
    std::atomic<bool> broken{false};
  };

  static bool SendAll(int fd, const char* p, ssize_t n) {
    while (n > 0) {
      ssize_t k = send(fd, p, static_cast<size_t>(n), MSG_NOSIGNAL);
      if (k <= 0) return false;
      p += k;
      n -= k;
    }
    return true;
  }

  void AcceptLoop() {
    for (;;) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;  // shut down
      auto c = std::make_shared<Conn>();
      c->client = fd;
      c->upstream = socket(upstream_->ai_family, SOCK_STREAM, 0);
      if (connect(c->upstream, upstream_->ai_addr, upstream_->ai_addrlen) != 0) {
        close(c->upstream);
        close(fd);
        continue;
      }
      ++accepted_;
      std::lock_guard<std::mutex> l(mu_);
      conns_.push_back(c);
      pumps_.emplace_back([this, c] { ClientToUpstream(*c); });
      pumps_.emplace_back([c] { UpstreamToClient(*c); });
    }
  }

  void ClientToUpstream(Conn& c) {
    char buf[16384];
    for (;;) {
      ssize_t n = recv(c.client, buf, sizeof buf, 0);
      if (n <= 0) break;
      if (c.broken) {
        // A TLS record of an HTTP request is hundreds of bytes; a close_notify alert is ~24.
        if (n >= 64) ++requests_on_broken_;
        shutdown(c.client, SHUT_RDWR);
        break;
      }
      if (!SendAll(c.upstream, buf, n)) break;
    }
    shutdown(c.upstream, SHUT_RDWR);
  }

  static void UpstreamToClient(Conn& c) {
    char buf[16384];
    for (;;) {
      ssize_t n = recv(c.upstream, buf, sizeof buf, 0);
      if (n <= 0 || c.broken) break;
      if (!SendAll(c.client, buf, n)) break;
    }
    if (!c.broken) shutdown(c.client, SHUT_RDWR);  // a broken one stays open, stale
  }

  addrinfo* upstream_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<int> requests_on_broken_{0};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<std::shared_ptr<Conn>> conns_;  // guarded by mu_
  std::vector<std::thread> pumps_;            // guarded by mu_
};

// Fills the transport's pool with `n` idle connections: n watches at once (each holds its own
// connection), which the server ends after a second, leaving the connections for reuse.
void FillPool(Transport& transport, int n) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&] {
      Request r;
      r.path = "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1";
      auto result = transport.Stream(
          r, [](std::string_view) { return absl::OkStatus(); }, nullptr);
      if (result.ok() && result->status_code == 200) ++ok;
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(ok == n);
}

}  // namespace

TEST_CASE(
    "HttpsTransport: after the API server drops N pooled connections, the next N requests all "
    "succeed at the first try and only one stale connection is ever tried",
    "[integration][client]") {
  RestConfig config = TestConfig();
  absl::StatusOr<ServerAddress> upstream = ParseServer(config.server);
  REQUIRE(upstream.ok());
  BreakableProxy proxy(*upstream);
  config.server = fmt::format("https://127.0.0.1:{}", proxy.port());  // the certificate's IP
  // The raw transport: no RetryingTransport behind it to hide a failure.
  absl::StatusOr<std::unique_ptr<Transport>> made = NewHttpsTransport(config);
  REQUIRE(made.ok());
  Transport& transport = **made;
  constexpr int kPooled = 8;
  Request get;
  get.path = "/api/v1/namespaces/default";

  SECTION("connections that stay open but are dead (the server closes them as they are reused)") {
    FillPool(transport, kPooled);
    REQUIRE(proxy.accepted() == kPooled);
    proxy.Break(/*close_clients=*/false);
    for (int i = 0; i < kPooled; ++i) {
      absl::StatusOr<Response> r = transport.Do(get);
      INFO("request " << i << ": " << MessageOf(r.status()));
      REQUIRE(r.ok());
      CHECK(r->status_code == 200);
    }
    // The first request met a stale connection and was re-sent on a fresh one; the other seven
    // stale connections were closed with it instead of being tried one by one.
    CHECK(proxy.requests_on_broken() == 1);
    CHECK(proxy.accepted() == kPooled + 1);

    // A POST that went out on a stale connection is not sent again: the server may have acted.
    FillPool(transport, 2);
    proxy.Break(/*close_clients=*/false);
    Request post;
    post.verb = "POST";
    post.path = "/api/v1/namespaces/default/configmaps";
    post.body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"stale-"}})";
    absl::StatusOr<Response> r = transport.Do(post);
    INFO(MessageOf(r.status()));
    CHECK(r.status().code() == absl::StatusCode::kUnavailable);
    CHECK_FALSE(RequestNotSent(r.status()));
    CHECK(proxy.requests_on_broken() == 2);
    // The next GET succeeds (re-sent on a fresh connection if it meets the other stale one).
    CHECK(transport.Do(get).ok());
  }

  SECTION("connections the server closed (FIN) while idle are dropped before use") {
    FillPool(transport, kPooled);
    proxy.Break(/*close_clients=*/true);
    for (int i = 0; i < kPooled; ++i) {
      absl::StatusOr<Response> r = transport.Do(get);
      INFO("request " << i << ": " << MessageOf(r.status()));
      REQUIRE(r.ok());
    }
    CHECK(proxy.requests_on_broken() == 0);  // none was even tried
  }
}
