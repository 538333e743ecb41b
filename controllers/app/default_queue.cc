#include "controllers/app/default_queue.h"

#include "common/util/log.h"

namespace basalt::controllers {

absl::Status EnsureDefaultQueue(client::Client& client) {
  absl::StatusOr<json::Document> got = client.Get(client::Queues(), "", "default");
  if (got.ok()) return absl::OkStatus();
  if (!absl::IsNotFound(got.status())) return got.status();
  absl::StatusOr<json::Document> created = client.Create(
      client::Queues(), "",
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"default"},)"
      R"("spec":{"weight":1,"reclaimable":true}})");
  if (created.ok()) {
    BASALT_LOG_INFO("Created the default queue");
    return absl::OkStatus();
  }
  if (absl::IsAlreadyExists(created.status())) return absl::OkStatus();
  return created.status();
}

}  // namespace basalt::controllers
