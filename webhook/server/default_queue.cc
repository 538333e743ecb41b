#include "webhook/server/default_queue.h"

#include "common/util/log.h"
#include "common/util/status.h"

namespace basalt::webhook::server {

std::string DefaultQueueJson() {
  return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",)"
         R"("metadata":{"name":"default"},"spec":{"weight":1,"reclaimable":true}})";
}

absl::Status EnsureDefaultQueue(client::Client& client) {
  absl::StatusOr<json::Document> existing = client.Get(client::Queues(), "", "default");
  if (existing.ok()) return absl::OkStatus();
  if (existing.status().code() != absl::StatusCode::kNotFound) return existing.status();
  absl::StatusOr<json::Document> created = client.Create(client::Queues(), "", DefaultQueueJson());
  if (created.ok()) {
    BASALT_LOG_INFO("Created the default queue");
    // Status is a subresource, so the create dropped it. Open it now rather than wait for
    // the queue controller; without queues/status permission (the shipped RBAC) that is
    // left to the controller, and admission treats the empty state as Open meanwhile.
    absl::StatusOr<json::Document> opened =
        client.Patch(client::Queues(), "", "default", client::PatchType::kMerge,
                     R"({"status":{"state":"Open"}})", "status");
    if (!opened.ok()) {
      BASALT_VLOG(2, "Left the default queue's state to the queue controller", "reason",
                  MessageOf(opened.status()));
    }
    return absl::OkStatus();
  }
  if (created.status().code() == absl::StatusCode::kAlreadyExists) return absl::OkStatus();
  return created.status();
}

}  // namespace basalt::webhook::server
