#pragma once
// The queue controller keeps each Queue's status: `state` (Open / Closing / Closed, driven by
// Commands OpenQueue and CloseQueue targeting the queue) and the number of the queue's
// PodGroups in each phase (pending, inqueue, running, unknown, completed). Status is written
// through the status subresource with a merge patch (so the scheduler's `allocated` is kept),
// only when it changed, and at most once per queue per second: a burst of PodGroup changes
// becomes one write.
//
// State machine (Volcano's, empty state = Open): OpenQueue -> Open; CloseQueue -> Closed when
// the queue has no PodGroups, else Closing; Closing -> Closed once the last PodGroup is gone.
// The `root` queue cannot be closed: whatever its status says, the controller writes Open.
//
// The `root` queue (weight 1, reclaimable false, no parent) is created when missing, at start
// and whenever it is deleted (Volcano's scheduler creates it at start only; the webhook refuses
// its deletion, this covers a webhook that was down or bypassed). Its capability, deserved and
// guarantee are left unset, as Volcano leaves them: the scheduler treats root as the whole
// cluster. A queue without spec.parent gets `parent: root` (the mutating webhook defaults it
// on CREATE; the controller patches queues that were created without the webhook), as
// Volcano's queue controller does.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controllers/app/controller.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace basalt::controllers {

struct QueueCounts {
  int32_t pending = 0;
  int32_t inqueue = 0;
  int32_t running = 0;
  int32_t unknown = 0;
  int32_t completed = 0;
  int32_t total = 0;
  bool operator==(const QueueCounts&) const = default;
};

// Counts PodGroups (documents) by status.phase; an absent phase counts as pending.
QueueCounts CountPodGroups(const std::vector<const json::Value*>& pod_groups);

// The next state of queue `name` in `state` ("" = Open) after `action` ("OpenQueue",
// "CloseQueue", or "" for a plain sync), given whether it still has PodGroups.
std::string NextQueueState(std::string_view name, std::string_view state, std::string_view action,
                           bool has_pod_groups);

// The Queue document the controller creates for `root`.
std::string RootQueueJson();

// The merge patch that sets spec.parent to root on `queue`, or nullopt when the queue is root
// itself or already has a parent.
std::optional<std::string> DefaultParentPatch(const json::Value& queue);

// The merge patch for the status subresource, or nullopt when `current_status` (the Queue's
// status object, may be null) already says so.
std::optional<std::string> QueueStatusPatch(const json::Value* current_status,
                                            std::string_view state, const QueueCounts& counts);

// Volcano's controller-manager gauges of a queue's PodGroups by phase,
// volcano_queue_pod_group_{inqueue,pending,running,unknown,completed}_count{queue_name}, set
// on every sync of the queue and removed when the queue is deleted. Thread-safe (prometheus-cpp
// families are); the registry must outlive it.
class QueuePodGroupMetrics {
 public:
  explicit QueuePodGroupMetrics(prometheus::Registry& registry);
  void Set(const std::string& queue, const QueueCounts& counts);
  void Remove(const std::string& queue);

 private:
  std::vector<prometheus::Family<prometheus::Gauge>*> families_;  // inqueue..completed
};

absl::StatusOr<std::unique_ptr<Controller>> NewQueueController(const ControllerContext& ctx);

}  // namespace basalt::controllers
