#pragma once
// HealthChecks serves /healthz (liveness) and /readyz (readiness) the way Kubernetes
// components do. Components register named checks; a request runs them all:
//
//   200 "ok"                                  every check passed
//   500 (/healthz) or 503 (/readyz) with      some check failed; the body names each
//   "[+]ping ok\n[-]informers failed: ...\n"  check and the reason of each failure
//   "readyz check failed\n"
//
// `?verbose` lists the checks on success too. Once SetShuttingDown() is called, /readyz
// fails with "shutting-down" so load balancers stop sending traffic during a graceful
// stop, while /healthz keeps passing. (Kubernetes answers 500 for failed readyz; Basalt
// uses 503, which probes treat the same and which says "not ready" rather than "broken".)
//
// Thread-safety: checks may be added and requests served concurrently. Checks run on the
// HTTP server's thread: keep them fast and non-blocking (read a flag, compare a time).

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/runtime/http.h"

namespace basalt::runtime {

class HealthChecks {
 public:
  // Returns OK when healthy/ready; otherwise the status message is the reason shown.
  using Check = std::function<absl::Status()>;

  HealthChecks();
  HealthChecks(const HealthChecks&) = delete;
  HealthChecks& operator=(const HealthChecks&) = delete;

  // A liveness check: failing it gets the process restarted. Use sparingly (a deadlock
  // detector, not "API server unreachable").
  void AddHealthzCheck(std::string name, Check check);
  // A readiness check, e.g. "informers synced", "leader election started".
  void AddReadyzCheck(std::string name, Check check);

  // Makes /readyz fail from now on (graceful shutdown has begun). Idempotent.
  void SetShuttingDown();

  HttpResponse ServeHealthz(const HttpRequest& request) const;
  HttpResponse ServeReadyz(const HttpRequest& request) const;

  // Registers GET /healthz, /livez (alias) and /readyz on `router`. `this` must outlive it.
  void RegisterOn(HttpRouter& router);

 private:
  struct NamedCheck {
    std::string name;
    Check check;
  };
  HttpResponse Serve(const HttpRequest& request, std::string_view endpoint, int failure_status,
                     const std::vector<NamedCheck>& checks) const;

  std::atomic<bool> shutting_down_{false};
  mutable std::mutex mu_;
  std::vector<NamedCheck> healthz_ ABSL_GUARDED_BY(mu_);
  std::vector<NamedCheck> readyz_ ABSL_GUARDED_BY(mu_);
};

}  // namespace basalt::runtime
