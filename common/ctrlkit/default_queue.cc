#include "common/ctrlkit/default_queue.h"

#include <algorithm>
#include <chrono>

#include "common/util/log.h"
#include "common/util/status.h"
#include "common/util/stop.h"
#include "fmt/format.h"

namespace basalt::ctrlkit {

std::string DefaultQueueJson(std::string_view name) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{{"name":"{}"}},)"
      R"("spec":{{"weight":1,"reclaimable":true}}}})",
      name);
}

absl::Status EnsureDefaultQueue(client::Client& client, std::string_view name) {
  const std::string queue(name);
  absl::StatusOr<json::Document> existing = client.Get(client::Queues(), "", queue);
  if (existing.ok()) return absl::OkStatus();
  if (!absl::IsNotFound(existing.status())) return existing.status();
  absl::StatusOr<json::Document> created =
      client.Create(client::Queues(), "", DefaultQueueJson(name));
  if (absl::IsAlreadyExists(created.status())) return absl::OkStatus();
  if (!created.ok()) return created.status();
  BASALT_LOG_INFO("Created the default queue", "queue", queue);
  // Status is a subresource, so the create dropped it.
  absl::StatusOr<json::Document> opened =
      client.Patch(client::Queues(), "", queue, client::PatchType::kMerge,
                   R"({"status":{"state":"Open"}})", "status");
  if (!opened.ok()) {
    BASALT_VLOG(2, "Left the default queue's state to the queue controller", "queue", queue,
                "reason", MessageOf(opened.status()));
  }
  return absl::OkStatus();
}

bool EnsureDefaultQueueWithRetry(const std::stop_token& stop, client::Client& client,
                                 std::string_view name, Clock* clock) {
  std::chrono::milliseconds backoff(500);
  for (int attempt = 1; !stop.stop_requested(); ++attempt) {
    absl::Status s = EnsureDefaultQueue(client, name);
    if (s.ok()) return true;
    if (attempt == 1 || attempt % 10 == 0) {
      BASALT_LOG_WARNING("Cannot create the default queue yet", "queue", std::string(name),
                         "attempt", attempt, "error", MessageOf(s));
    }
    if (!SleepFor(stop, backoff, clock)) return false;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
  return false;
}

}  // namespace basalt::ctrlkit
