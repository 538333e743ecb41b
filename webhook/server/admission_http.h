#pragma once
// The HTTP face of the admission router: checks what the API server must send (POST,
// Content-Type application/json), hands the body to Router::Serve, and records the latency
// of each review by path and verdict on /metrics:
//
//   basalt_webhook_admission_duration_seconds{path="/jobs/validate",verdict="allowed"}
//   verdict: allowed | denied | error (a non-200 answer: malformed review, wrong method...)
//
// Thread-safety: the handlers may run on many I/O threads at once (the router and the
// metrics are thread-safe). Ownership: the handlers borrow the router and the metrics, which
// must outlive the HTTP server.

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/runtime/http.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "webhook/router.h"

namespace basalt::webhook::server {

class AdmissionMetrics {
 public:
  // Registers the histogram family on `registry` with one series per path and verdict.
  AdmissionMetrics(prometheus::Registry& registry, const std::vector<std::string>& paths);
  AdmissionMetrics(const AdmissionMetrics&) = delete;
  AdmissionMetrics& operator=(const AdmissionMetrics&) = delete;

  enum Verdict { kAllowed = 0, kDenied = 1, kError = 2 };
  void Observe(std::string_view path, Verdict verdict, double seconds);

 private:
  // Series are created up front: prometheus::Family::Add takes a lock and hashes labels.
  std::map<std::string, std::array<prometheus::Histogram*, 3>, std::less<>> series_;
};

// The paths Volcano knows (pkg/webhooks/router) that Basalt does not serve. Listing one in
// --enabled-admission is a warning, not an error, so Volcano deployments' flags keep working.
const std::vector<std::string>& VolcanoOnlyAdmissionPaths();

// Resolves --enabled-admission against the router: an empty list means every registered path;
// a path that neither Basalt nor Volcano knows is kInvalidArgument naming it. Volcano-only
// paths are dropped and returned in `ignored`.
absl::StatusOr<std::vector<std::string>> ResolveEnabledPaths(
    const Router& router, const std::vector<std::string>& requested,
    std::vector<std::string>* ignored);

// Whether the cluster state the handlers read (the informer caches) can be trusted: OK, or
// kUnavailable saying what is missing ("caches not synced: queues,jobs"). Thread-safe.
using ClusterStateReadiness = std::function<absl::Status()>;

// Seconds the API server is asked to wait before retrying a review refused as not ready.
inline constexpr int kNotReadyRetryAfterSeconds = 1;

// Serves one admission request (the method is checked by the HttpRouter): 415 unless the
// Content-Type is application/json; for a path whose handler reads the cluster state while
// `ready` (if set) is not OK, 503 with "Retry-After: 1" and a Kubernetes Status body
// ("vc-webhook-manager is not ready: caches not synced: queues", reason ServiceUnavailable):
// the API server retries such answers on its own within the webhook's timeoutSeconds
// (client-go retries 5xx with Retry-After up to 10 times) before applying the failurePolicy,
// where an AdmissionReview denial would be final and a refused connection is not retried.
// Otherwise what Router::Serve answers.
runtime::HttpResponse ServeAdmission(const Router& router, AdmissionMetrics* metrics,
                                     const runtime::HttpRequest& request,
                                     const ClusterStateReadiness& ready = {});

// Registers POST `path` -> ServeAdmission for each of `paths` on `http_router`. `ready` is
// copied into the handlers; what it reads must outlive the HTTP server.
void RegisterAdmissionPaths(runtime::HttpRouter& http_router, const Router& router,
                            AdmissionMetrics* metrics, const std::vector<std::string>& paths,
                            ClusterStateReadiness ready = {});

}  // namespace basalt::webhook::server
