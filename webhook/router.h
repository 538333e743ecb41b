#pragma once
// AdmissionHandler is one admission webhook endpoint (validate or mutate one resource);
// Router maps URL paths to handlers and turns an HTTP POST body into an HTTP reply.
//
// Handlers are registered once at start-up (NewAdmissionRouter in admission_router.h) and
// are then read-only, so Serve() may be called from many threads at once. Handlers must be
// thread-safe and must not throw; Serve() still catches exceptions and denies.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/admission_review.h"

namespace basalt::webhook {

class AdmissionHandler {
 public:
  virtual ~AdmissionHandler() = default;
  // Decides on one request. Requests of operations or kinds the handler does not act on are
  // allowed unchanged.
  virtual AdmissionResponse Handle(const AdmissionRequest& request) const = 0;
  // Whether the verdict depends on the cluster state (the ClusterLister's caches). Such
  // handlers must not be asked before the caches have synced (the HTTP layer refuses with a
  // retryable error until then); handlers that look only at the object under review
  // (defaulting, pod checks) answer from the start.
  virtual bool ReadsClusterState() const { return true; }
};

// What the HTTP layer sends back.
struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class Router {
 public:
  Router() = default;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // Registers `handler` for `path` (e.g. "/jobs/validate"), replacing an earlier one.
  // `kind` is the object kind the handler admits ("Job"); requests for another kind are
  // denied with 400 (a webhook configuration bug), and requests for a subresource
  // (jobs/status) are allowed without calling the handler. Empty `kind` accepts any.
  void Register(std::string path, std::string kind, std::unique_ptr<AdmissionHandler> handler);

  // The handler for `path`, or nullptr.
  const AdmissionHandler* Find(std::string_view path) const;
  // Registered paths, sorted.
  std::vector<std::string> Paths() const;
  // Whether the handler for `path` (query string ignored) reads the cluster state (see
  // AdmissionHandler::ReadsClusterState); false for unknown paths.
  bool ReadsClusterState(std::string_view path) const;

  // Handles one POST to `path` (a query string such as "?timeout=10s", which the API server
  // appends, is ignored) with `body`:
  //  - unknown path: 404, text/plain;
  //  - body larger than kMaxAdmissionReviewBytes: 413, text/plain;
  //  - body that is not an AdmissionReview v1 with a request uid: 400, text/plain with the
  //    reason (the API server treats this as a webhook failure, per failurePolicy);
  //  - otherwise 200 with an AdmissionReview v1 response for the request uid.
  // The HTTP layer should check method POST and Content-Type application/json itself.
  HttpReply Serve(std::string_view path, std::string_view body) const;

 private:
  struct Route {
    std::string kind;
    std::unique_ptr<AdmissionHandler> handler;
  };
  std::map<std::string, Route, std::less<>> routes_;
};

}  // namespace basalt::webhook
