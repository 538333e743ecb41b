#include "webhook/server/admission_http.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "prometheus/family.h"

namespace basalt::webhook::server {
namespace {

// Admission reviews take well under a millisecond in-process; the API server gives up at
// timeoutSeconds (10 s).
const prometheus::Histogram::BucketBoundaries& Buckets() {
  static const auto* kBuckets = new prometheus::Histogram::BucketBoundaries{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return *kBuckets;
}

bool IsJsonContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  while (!media.empty() && media.front() == ' ') media.remove_prefix(1);
  std::string lower(media);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(absl::ascii_tolower(c)); });
  return lower == "application/json";
}

// The body of a 503 for a review that arrives before the caches synced: a Kubernetes Status,
// which the API server's client decodes into the error it reports if every retry fails.
std::string NotReadyStatus(std::string_view reason) {
  json::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  json::Set(doc, "kind", json::MakeString("Status", a), a);
  json::Set(doc, "apiVersion", json::MakeString("v1", a), a);
  json::Set(doc, "metadata", json::Value(rapidjson::kObjectType), a);
  json::Set(doc, "status", json::MakeString("Failure", a), a);
  json::Set(doc, "message",
            json::MakeString(fmt::format("vc-webhook-manager is not ready: {}", reason), a), a);
  json::Set(doc, "reason", json::MakeString("ServiceUnavailable", a), a);
  json::Set(doc, "code", json::Value(503), a);
  return json::Serialize(doc);
}

}  // namespace

AdmissionMetrics::AdmissionMetrics(prometheus::Registry& registry,
                                   const std::vector<std::string>& paths) {
  auto& family = prometheus::BuildHistogram()
                     .Name("basalt_webhook_admission_duration_seconds")
                     .Help(
                         "Time to answer one admission review, by path and verdict "
                         "(allowed, denied, error).")
                     .Register(registry);
  static constexpr std::array<const char*, 3> kVerdicts = {"allowed", "denied", "error"};
  for (const std::string& path : paths) {
    std::array<prometheus::Histogram*, 3> series{};
    for (size_t i = 0; i < kVerdicts.size(); ++i) {
      series[i] = &family.Add({{"path", path}, {"verdict", kVerdicts[i]}}, Buckets());
    }
    series_.emplace(path, series);
  }
}

void AdmissionMetrics::Observe(std::string_view path, Verdict verdict, double seconds) {
  auto it = series_.find(path);
  if (it == series_.end()) return;
  it->second[verdict]->Observe(seconds);
}

const std::vector<std::string>& VolcanoOnlyAdmissionPaths() {
  static const auto* kPaths =
      new std::vector<std::string>{"/pods/mutate", "/jobflows/validate", "/hypernodes/validate"};
  return *kPaths;
}

absl::StatusOr<std::vector<std::string>> ResolveEnabledPaths(
    const Router& router, const std::vector<std::string>& requested,
    std::vector<std::string>* ignored) {
  std::vector<std::string> known = router.Paths();
  if (requested.empty()) return known;
  std::vector<std::string> out;
  for (const std::string& path : requested) {
    if (path.empty()) continue;
    if (std::find(known.begin(), known.end(), path) != known.end()) {
      if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
      continue;
    }
    const auto& volcano = VolcanoOnlyAdmissionPaths();
    if (std::find(volcano.begin(), volcano.end(), path) != volcano.end()) {
      if (ignored != nullptr) ignored->push_back(path);
      continue;
    }
    std::string all;
    for (const std::string& k : known) all += fmt::format("{}{}", all.empty() ? "" : ",", k);
    return absl::InvalidArgumentError(
        fmt::format("--enabled-admission: unknown admission path \"{}\" (known: {})", path, all));
  }
  if (out.empty()) {
    return absl::InvalidArgumentError("--enabled-admission: no path Basalt serves is enabled");
  }
  return out;
}

runtime::HttpResponse ServeAdmission(const Router& router, AdmissionMetrics* metrics,
                                     const runtime::HttpRequest& request,
                                     const ClusterStateReadiness& ready) {
  const auto start = std::chrono::steady_clock::now();
  runtime::HttpResponse response;
  AdmissionMetrics::Verdict verdict = AdmissionMetrics::kError;
  absl::Status readiness = absl::OkStatus();
  if (ready && router.ReadsClusterState(request.path)) readiness = ready();
  if (!IsJsonContentType(request.Header("Content-Type"))) {
    response = runtime::HttpResponse::Text(
        415, fmt::format("Content-Type must be application/json, got \"{}\"\n",
                         request.Header("Content-Type")));
  } else if (!readiness.ok()) {
    // Guessing from half-filled caches would deny valid objects ("queue not found") and allow
    // what must be refused (deleting a queue that still has Jobs).
    BASALT_VLOG(2, "Refusing an admission review until the caches have synced", "path",
                request.path, "reason", MessageOf(readiness));
    response = runtime::HttpResponse::Json(503, NotReadyStatus(MessageOf(readiness)));
    response.headers.emplace_back("Retry-After", std::to_string(kNotReadyRetryAfterSeconds));
  } else {
    HttpReply reply = router.Serve(request.target, request.body);
    response.status = reply.status;
    response.content_type = std::move(reply.content_type);
    response.body = std::move(reply.body);
    if (response.status == 200) {
      verdict = response.body.find("\"allowed\":false") != std::string::npos
                    ? AdmissionMetrics::kDenied
                    : AdmissionMetrics::kAllowed;
    }
  }
  if (metrics != nullptr) {
    metrics->Observe(
        request.path, verdict,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return response;
}

void RegisterAdmissionPaths(runtime::HttpRouter& http_router, const Router& router,
                            AdmissionMetrics* metrics, const std::vector<std::string>& paths,
                            ClusterStateReadiness ready) {
  auto shared_ready = std::make_shared<const ClusterStateReadiness>(std::move(ready));
  for (const std::string& path : paths) {
    http_router.Handle("POST", path,
                       [&router, metrics, shared_ready](const runtime::HttpRequest& request) {
                         return ServeAdmission(router, metrics, request, *shared_ready);
                       });
  }
}

}  // namespace basalt::webhook::server
