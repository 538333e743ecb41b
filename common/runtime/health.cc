#include "common/runtime/health.h"

#include <exception>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::runtime {

HealthChecks::HealthChecks() {
  AddHealthzCheck("ping", [] { return absl::OkStatus(); });
  AddReadyzCheck("ping", [] { return absl::OkStatus(); });
}

void HealthChecks::AddHealthzCheck(std::string name, Check check) {
  std::lock_guard<std::mutex> l(mu_);
  healthz_.push_back(NamedCheck{std::move(name), std::move(check)});
}

void HealthChecks::AddReadyzCheck(std::string name, Check check) {
  std::lock_guard<std::mutex> l(mu_);
  readyz_.push_back(NamedCheck{std::move(name), std::move(check)});
}

void HealthChecks::SetShuttingDown() { shutting_down_ = true; }

HttpResponse HealthChecks::ServeHealthz(const HttpRequest& request) const {
  std::vector<NamedCheck> checks;
  {
    std::lock_guard<std::mutex> l(mu_);
    checks = healthz_;
  }
  return Serve(request, "healthz", 500, checks);
}

HttpResponse HealthChecks::ServeReadyz(const HttpRequest& request) const {
  std::vector<NamedCheck> checks;
  {
    std::lock_guard<std::mutex> l(mu_);
    checks = readyz_;
  }
  if (shutting_down_) {
    checks.push_back(
        NamedCheck{"shutdown", [] { return absl::UnavailableError("shutting-down"); }});
  }
  return Serve(request, "readyz", 503, checks);
}

HttpResponse HealthChecks::Serve(const HttpRequest& request, std::string_view endpoint,
                                 int failure_status, const std::vector<NamedCheck>& checks) const {
  std::string report;
  bool failed = false;
  for (const NamedCheck& c : checks) {
    absl::Status status;
    try {
      status = c.check();
    } catch (const std::exception& e) {
      status = absl::InternalError(fmt::format("check threw: {}", e.what()));
    }
    if (status.ok()) {
      report += fmt::format("[+]{} ok\n", c.name);
    } else {
      failed = true;
      report += fmt::format("[-]{} failed: {}\n", c.name, MessageOf(status));
    }
  }
  if (failed) {
    return HttpResponse::Text(failure_status, report + fmt::format("{} check failed\n", endpoint));
  }
  if (request.HasQueryParameter("verbose")) {
    return HttpResponse::Text(200, report + fmt::format("{} check passed\n", endpoint));
  }
  return HttpResponse::Text(200, "ok");
}

void HealthChecks::RegisterOn(HttpRouter& router) {
  router.Handle("GET", "/healthz", [this](const HttpRequest& r) { return ServeHealthz(r); });
  router.Handle("GET", "/livez", [this](const HttpRequest& r) { return ServeHealthz(r); });
  router.Handle("GET", "/readyz", [this](const HttpRequest& r) { return ServeReadyz(r); });
}

}  // namespace basalt::runtime
