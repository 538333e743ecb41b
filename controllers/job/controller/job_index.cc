#include "controllers/job/controller/job_index.h"

#include <vector>

#include "common/api/views.h"
#include "common/api/vocabulary.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {}  // namespace

std::string JobKey(std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}", ns, name);
}

informer::IndexFunc PodsByJobIndexFunc() {
  return informer::IndexBy<json::Document>([](const json::Document& pod) {
    std::vector<std::string> out;
    std::string_view job = api::view::Annotation(pod, api::kJobNameKey);
    if (job.empty()) return out;
    out.push_back(JobKey(api::view::Namespace(pod), job));
    return out;
  });
}

}  // namespace basalt::controllers
