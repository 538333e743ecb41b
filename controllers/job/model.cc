#include "controllers/job/model.h"

#include "fmt/format.h"

namespace basalt::controllers {

JobCounts CountsFromApi(const api::JobStatus& s) { return static_cast<const JobCounts&>(s); }

std::string MakePodName(std::string_view job, std::string_view task, int32_t index) {
  return fmt::format("{}-{}-{}", job, task, index);
}

}  // namespace basalt::controllers
