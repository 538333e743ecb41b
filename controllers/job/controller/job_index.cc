#include "controllers/job/controller/job_index.h"

#include <vector>

#include "common/api/vocabulary.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

std::string_view StringAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* p = json::FindPath(v, path);
  return p != nullptr && p->IsString() ? json::AsView(*p) : std::string_view();
}

}  // namespace

std::string JobKey(std::string_view ns, std::string_view name) {
  return fmt::format("{}/{}", ns, name);
}

informer::IndexFunc PodsByJobIndexFunc() {
  return informer::IndexBy<json::Document>([](const json::Document& pod) {
    std::vector<std::string> out;
    std::string_view job = StringAt(pod, {"metadata", "annotations", api::kJobNameKey});
    if (job.empty()) return out;
    out.push_back(JobKey(StringAt(pod, {"metadata", "namespace"}), job));
    return out;
  });
}

}  // namespace basalt::controllers
