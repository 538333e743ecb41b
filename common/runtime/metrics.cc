#include "common/runtime/metrics.h"

#include <utility>

#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace basalt::runtime {

HttpHandler MetricsHandler(std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  return [collectables = std::move(collectables)](const HttpRequest&) {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& collectable : collectables) {
      std::vector<prometheus::MetricFamily> collected = collectable->Collect();
      families.insert(families.end(), std::make_move_iterator(collected.begin()),
                      std::make_move_iterator(collected.end()));
    }
    HttpResponse response;
    response.content_type = kPrometheusTextContentType;
    response.body = prometheus::TextSerializer().Serialize(families);
    return response;
  };
}

void RegisterMetrics(HttpRouter& router,
                     std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  router.Handle("GET", "/metrics", MetricsHandler(std::move(collectables)));
}

}  // namespace basalt::runtime
