// InformerLister's transforms and indices (over a Store, as the informers use them), and the
// HTTP face of the admission router.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/informer/store.h"
#include "common/util/json.h"
#include "fmt/format.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "webhook/admission_router.h"
#include "webhook/fake_lister.h"
#include "webhook/server/admission_http.h"
#include "webhook/server/informer_lister.h"
#include "webhook/server/options.h"

namespace basalt::webhook::server {
namespace {

namespace li = lister_internal;

informer::Object Apply(const informer::Transform& t, std::string_view text) {
  auto doc = json::Parse(text);
  REQUIRE(doc.ok());
  auto obj = t.Apply(std::move(*doc));
  REQUIRE(obj.ok());
  return *obj;
}

std::string QueueDoc(std::string_view name, std::string_view parent, std::string_view state) {
  return fmt::format(
      R"({{"metadata":{{"name":"{}","resourceVersion":"1"}},"spec":{{"parent":"{}",)"
      R"("capability":{{"cpu":"8","nvidia.com/gpu":2}}}},"status":{{"state":"{}"}}}})",
      name, parent, state);
}

std::string JobDoc(std::string_view ns, std::string_view name, std::string_view queue) {
  return fmt::format(
      R"({{"metadata":{{"namespace":"{}","name":"{}","resourceVersion":"1"}},"spec":{{"queue":"{}",)"
      R"("tasks":[{{"name":"w","replicas":1,"template":{{"spec":{{}}}}}}]}}}})",
      ns, name, queue);
}

TEST_CASE("InformerLister: queues keep state, parent and capability, children by index",
          "[lister]") {
  informer::Store store({{li::kParentIndex, li::ParentIndexFunc()}});
  store.Upsert(Apply(li::QueueInfoTransform(), QueueDoc("root", "", "Open")));
  store.Upsert(Apply(li::QueueInfoTransform(), QueueDoc("b", "root", "Closed")));
  store.Upsert(Apply(li::QueueInfoTransform(), QueueDoc("a", "root", "")));
  const QueueInfo& b = store.Get("b").As<QueueInfo>();
  CHECK(b.name == "b");
  CHECK(b.state == "Closed");
  CHECK(b.parent == "root");
  CHECK(b.capability == std::map<std::string, std::string>{{"cpu", "8"}, {"nvidia.com/gpu", "2"}});
  CHECK(*store.IndexKeys(li::kParentIndex, "root") == std::vector<std::string>{"a", "b"});
  CHECK(store.IndexKeys(li::kParentIndex, "a")->empty());
}

TEST_CASE("InformerLister: Jobs and PodGroups counted per queue, no queue counts as default",
          "[lister]") {
  informer::Store store({{li::kQueueIndex, li::SpecQueueIndexFunc()}});
  store.Upsert(Apply(li::SpecQueueTransform(), JobDoc("ns1", "j1", "gpu")));
  store.Upsert(Apply(li::SpecQueueTransform(), JobDoc("ns2", "j1", "gpu")));
  store.Upsert(Apply(li::SpecQueueTransform(), JobDoc("ns1", "j2", "")));
  CHECK(store.IndexKeys(li::kQueueIndex, "gpu")->size() == 2);
  CHECK(store.IndexKeys(li::kQueueIndex, "default")->size() == 1);
  store.Delete("ns2/j1");
  CHECK(store.IndexKeys(li::kQueueIndex, "gpu")->size() == 1);
}

TEST_CASE("InformerLister: the namespace queue annotation is kept, nothing else", "[lister]") {
  informer::Object ns = Apply(
      li::NamespaceQueueTransform(),
      R"({"metadata":{"name":"team-a","resourceVersion":"3","annotations":{"scheduling.volcano.sh/queue-name":"gpu","x":"y"}}})");
  CHECK(ns.As<li::QueueRef>().queue == "gpu");
  informer::Object plain =
      Apply(li::NamespaceQueueTransform(), R"({"metadata":{"name":"b","resourceVersion":"3"}})");
  CHECK(plain.As<li::QueueRef>().queue.empty());
}

std::string Review(std::string_view kind, std::string_view object) {
  return fmt::format(
      R"({{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u1",)"
      R"("kind":{{"group":"scheduling.volcano.sh","version":"v1beta1","kind":"{}"}},)"
      R"("resource":{{"group":"scheduling.volcano.sh","version":"v1beta1","resource":"queues"}},)"
      R"("operation":"CREATE","userInfo":{{"username":"u"}},"object":{}}}}})",
      kind, object);
}

runtime::HttpRequest Post(std::string path, std::string body,
                          std::string content_type = "application/json") {
  runtime::HttpRequest r;
  r.method = "POST";
  r.target = path;
  r.path = path.substr(0, path.find('?'));
  r.headers = {{"Content-Type", std::move(content_type)}};
  r.body = std::move(body);
  return r;
}

std::string Metrics(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

TEST_CASE("ServeAdmission: checks the Content-Type and records the verdict per path",
          "[admission-http]") {
  FakeLister lister;
  auto router = NewAdmissionRouter({.lister = &lister, .options = {}});
  prometheus::Registry registry;
  AdmissionMetrics metrics(registry, router->Paths());
  const std::string negative =
      Review("Queue", R"({"metadata":{"name":"q"},"spec":{"capability":{"cpu":"-1"}}})");

  runtime::HttpResponse denied =
      ServeAdmission(*router, &metrics, Post("/queues/validate?timeout=10s", negative));
  CHECK(denied.status == 200);
  CHECK(denied.body.find("\"allowed\":false") != std::string::npos);

  runtime::HttpResponse allowed = ServeAdmission(
      *router, &metrics,
      Post("/queues/validate", Review("Queue", R"({"metadata":{"name":"q"},"spec":{}})"),
           "application/json; charset=utf-8"));
  CHECK(allowed.status == 200);
  CHECK(allowed.body.find("\"allowed\":true") != std::string::npos);

  runtime::HttpResponse wrong_type =
      ServeAdmission(*router, &metrics, Post("/queues/validate", negative, "text/plain"));
  CHECK(wrong_type.status == 415);
  runtime::HttpResponse garbage = ServeAdmission(*router, &metrics, Post("/jobs/validate", "{"));
  CHECK(garbage.status == 400);

  std::string text = Metrics(registry);
  CHECK(
      text.find(
          R"(basalt_webhook_admission_duration_seconds_count{path="/queues/validate",verdict="denied"} 1)") !=
      std::string::npos);
  CHECK(
      text.find(
          R"(basalt_webhook_admission_duration_seconds_count{path="/queues/validate",verdict="allowed"} 1)") !=
      std::string::npos);
  CHECK(
      text.find(
          R"(basalt_webhook_admission_duration_seconds_count{path="/queues/validate",verdict="error"} 1)") !=
      std::string::npos);
  CHECK(
      text.find(
          R"(basalt_webhook_admission_duration_seconds_count{path="/jobs/validate",verdict="error"} 1)") !=
      std::string::npos);
}

TEST_CASE(
    "ServeAdmission: before the caches sync, cache-reading paths get a retryable 503, others "
    "answer",
    "[admission-http]") {
  FakeLister lister;  // Empty, as the informer caches are right after a restart.
  auto router = NewAdmissionRouter({.lister = &lister, .options = {}});
  prometheus::Registry registry;
  AdmissionMetrics metrics(registry, router->Paths());
  bool synced = false;
  ClusterStateReadiness ready = [&synced]() -> absl::Status {
    if (synced) return absl::OkStatus();
    return absl::UnavailableError("caches not synced: queues,jobs");
  };
  // Deleting queue "q", which the (not yet listed) cluster has Jobs in.
  const std::string delete_queue = fmt::format(
      R"({{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u2",)"
      R"("kind":{{"group":"scheduling.volcano.sh","version":"v1beta1","kind":"Queue"}},)"
      R"("resource":{{"group":"scheduling.volcano.sh","version":"v1beta1","resource":"queues"}},)"
      R"("name":"q","operation":"DELETE","userInfo":{{"username":"u"}},"oldObject":{}}}}})",
      QueueDoc("q", "", "Open"));

  runtime::HttpResponse early =
      ServeAdmission(*router, &metrics, Post("/queues/validate", delete_queue), ready);
  CHECK(early.status == 503);
  CHECK(early.content_type == "application/json");
  CHECK(early.headers == runtime::HttpHeaders{{"Retry-After", "1"}});
  auto status = json::Parse(early.body);
  REQUIRE(status.ok());
  CHECK(json::GetString(*status, "kind") == "Status");
  CHECK(json::GetString(*status, "reason") == "ServiceUnavailable");
  CHECK(json::GetInt(*status, "code") == 503);
  CHECK(json::GetString(*status, "message") ==
        "vc-webhook-manager is not ready: caches not synced: queues,jobs");
  // Never an AdmissionReview answer guessed from the empty cache.
  CHECK(early.body.find("allowed") == std::string::npos);

  // The Queue mutator reads nothing from the cluster: it answers at once.
  runtime::HttpResponse mutate = ServeAdmission(
      *router, &metrics,
      Post("/queues/mutate", Review("Queue", R"({"metadata":{"name":"q"},"spec":{}})")), ready);
  CHECK(mutate.status == 200);
  CHECK(mutate.body.find("\"allowed\":true") != std::string::npos);

  // Synced: the cluster has a Job in q, so the delete is refused with the count.
  synced = true;
  lister.AddQueue("q", "Open");
  lister.AddJob("team-a", "j1", "q");
  runtime::HttpResponse later =
      ServeAdmission(*router, &metrics, Post("/queues/validate", delete_queue), ready);
  CHECK(later.status == 200);
  CHECK(later.body.find("\"allowed\":false") != std::string::npos);
  CHECK(later.headers.empty());

  std::string text = Metrics(registry);
  CHECK(
      text.find(
          R"(basalt_webhook_admission_duration_seconds_count{path="/queues/validate",verdict="error"} 1)") !=
      std::string::npos);
  CHECK(
      text.find(
          R"(basalt_webhook_admission_duration_seconds_count{path="/queues/validate",verdict="denied"} 1)") !=
      std::string::npos);
}

TEST_CASE(
    "ResolveEnabledPaths: default all, unknown path is an error naming it, Volcano-only "
    "paths ignored",
    "[admission-http]") {
  FakeLister lister;
  auto router = NewAdmissionRouter({.lister = &lister, .options = {}});
  std::vector<std::string> ignored;
  CHECK(*ResolveEnabledPaths(*router, {}, &ignored) == router->Paths());
  auto some = ResolveEnabledPaths(
      *router, {"/jobs/validate", "/hypernodes/validate", "/jobs/validate"}, &ignored);
  REQUIRE(some.ok());
  CHECK(*some == std::vector<std::string>{"/jobs/validate"});
  CHECK(ignored == std::vector<std::string>{"/hypernodes/validate"});
  auto bad = ResolveEnabledPaths(*router, {"/jobs/validate", "/job/validate"}, nullptr);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("\"/job/validate\"") != std::string::npos);
}

TEST_CASE("WebhookOptions: exactly one certificate source, NS/NAME secrets", "[options]") {
  WebhookOptions o;
  CHECK(o.Validate().code() == absl::StatusCode::kInvalidArgument);
  o.cert_dir = "/tmp/x";
  CHECK(o.Validate().ok());
  o.cert_secret = "volcano-system/secret";
  CHECK_FALSE(o.Validate().ok());
  o.cert_dir.clear();
  CHECK(o.Validate().ok());
  CHECK(o.CertSecretNamespace() == "volcano-system");
  CHECK(o.CertSecretName() == "secret");
  o.cert_secret = "secret";
  CHECK_FALSE(o.Validate().ok());
  o.cert_secret.clear();
  o.tls_cert_file = "a.crt";
  CHECK_FALSE(o.Validate().ok());
  o.tls_private_key_file = "a.key";
  o.ca_cert_file = "ca.crt";
  CHECK(o.Validate().ok());
  CHECK(o.ServingAddress() == "0.0.0.0:8443");
  o.listen_address = "::1";
  CHECK(o.ServingAddress() == "[::1]:8443");
  o.request_timeout_seconds = 60;
  CHECK_FALSE(o.Validate().ok());
  o.request_timeout_seconds = 5;
  o.cert_reload_interval_seconds = 0;
  absl::Status zero = o.Validate();
  CHECK(zero.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(zero.message()) == "--cert-reload-interval: must be at least 1, got 0");
  o.cert_reload_interval_seconds = 2;
  CHECK(o.Validate().ok());
  o.idle_timeout_seconds = 0;
  CHECK(std::string(o.Validate().message()) == "--idle-timeout: must be in [1, 3600], got 0");
  o.idle_timeout_seconds = 120;
  o.max_job_pods = 0;
  CHECK(std::string(o.Validate().message()) == "--max-job-pods: must be in [1, 2147483647], got 0");
  o.max_job_pods = 10000;
  CHECK(o.Validate().ok());
}

TEST_CASE(
    "WebhookOptions: the idle timeout outlasts the API server's 90 s, apart from the "
    "request timeout",
    "[options]") {
  WebhookOptions o;
  CHECK(o.idle_timeout_seconds == 120);
  CHECK(o.request_timeout_seconds == 5);
  CHECK(o.max_job_pods == 10000);
  client::FlagSet flags("test");
  o.AddFlags(flags);
  REQUIRE(flags
              .Parse(std::vector<std::string>{"--cert-dir=/tmp/x", "--idle-timeout=300",
                                              "--request-timeout=3", "--max-job-pods=500",
                                              "--testing-informer-start-delay=2"})
              .ok());
  CHECK(o.idle_timeout_seconds == 300);
  CHECK(o.request_timeout_seconds == 3);
  CHECK(o.max_job_pods == 500);
  CHECK(o.testing_informer_start_delay_seconds == 2);
  CHECK(o.Validate().ok());
}

TEST_CASE("WebhookOptions: flags parse into the options", "[options]") {
  WebhookOptions o;
  client::FlagSet flags("test");
  o.AddFlags(flags);
  REQUIRE(flags
              .Parse(std::vector<std::string>{
                  "--port=9443", "--listen-address", "127.0.0.1", "--cert-secret=ns/name",
                  "--webhook-configurations=a,b", "--enabled-admission=/jobs/validate"})
              .ok());
  CHECK(o.port == 9443);
  CHECK(o.listen_address == "127.0.0.1");
  CHECK(o.webhook_configurations == std::vector<std::string>{"a", "b"});
  CHECK(o.enabled_admission == std::vector<std::string>{"/jobs/validate"});
  CHECK(o.Validate().ok());
}

}  // namespace
}  // namespace basalt::webhook::server
