#pragma once
// Prometheus /metrics for Basalt's own HTTP server (prometheus-cpp core only: no civetweb).

#include <memory>
#include <vector>

#include "common/runtime/http.h"
#include "prometheus/collectable.h"

namespace basalt::runtime {

// Content type of the Prometheus text exposition format 0.0.4.
inline constexpr char kPrometheusTextContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A handler that collects `collectables` (usually one prometheus::Registry) on every request
// and answers in the text format. The handler shares ownership of them.
HttpHandler MetricsHandler(std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

// Registers GET /metrics serving `collectables` on `router`.
void RegisterMetrics(HttpRouter& router,
                     std::vector<std::shared_ptr<prometheus::Collectable>> collectables);

}  // namespace basalt::runtime
