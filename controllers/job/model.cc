#include "controllers/job/model.h"

#include "fmt/format.h"

namespace basalt::controllers {

std::optional<int32_t> JobCounts::TaskSucceeded(std::string_view task) const {
  auto it = task_status_count.find(std::string(task));
  if (it == task_status_count.end()) return std::nullopt;
  auto p = it->second.find("Succeeded");
  return p == it->second.end() ? 0 : p->second;
}

JobCounts CountsFromApi(const api::JobStatus& s) {
  JobCounts c;
  c.pending = s.pending;
  c.running = s.running;
  c.succeeded = s.succeeded;
  c.failed = s.failed;
  c.terminating = s.terminating;
  c.unknown = s.unknown;
  c.version = s.version;
  c.retry_count = s.retry_count;
  c.min_available = s.min_available;
  c.task_status_count = s.task_status_count;
  return c;
}

std::string MakePodName(std::string_view job, std::string_view task, int32_t index) {
  return fmt::format("{}-{}-{}", job, task, index);
}

}  // namespace basalt::controllers
