#pragma once
// QueueInfo is the scheduler's view of a scheduling.volcano.sh Queue. Value type.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"

namespace basalt::sched {

enum class QueueState { kOpen, kClosed, kClosing, kUnknown };
// The state as the Queue's status.state spells it.
constexpr std::string_view QueueStateName(QueueState s) {
  switch (s) {
    case QueueState::kOpen:
      return "Open";
    case QueueState::kClosed:
      return "Closed";
    case QueueState::kClosing:
      return "Closing";
    case QueueState::kUnknown:
      break;
  }
  return "Unknown";
}

// Node group names (nodes' volcano.sh/nodegroup-name label) a queue's tasks must or should use.
struct NodeGroupTerms {
  std::vector<std::string> required;
  std::vector<std::string> preferred;
};

struct QueueInfo {
  std::string name;  // also the queue's id
  int32_t weight = 1;
  int32_t priority = 0;
  // spec.capability; nullopt = unlimited. Dimensions absent from it are unlimited.
  std::optional<Resource> capability;
  std::optional<Resource> deserved;  // spec.deserved (capacity plugin)
  Resource guarantee;                // spec.guarantee.resource
  bool reclaimable = true;           // spec.reclaimable, nil means true
  QueueState state = QueueState::kOpen;
  std::string parent;
  // The volcano.sh/hierarchy and volcano.sh/hierarchy-weights annotations ("root/a/b",
  // "1/2/3"); empty when absent. Read by the drf plugin's hierarchical mode (hdrf).
  std::string hierarchy;
  std::string hierarchy_weights;
  Timestamp creation_time{};
  // status.allocated as last read from the API; the session writes it only when it changes.
  Resource status_allocated;
  // status.deserved and status.guarantee (Basalt extension) as last read or written; the session
  // writes them only when the share plugin computes other values.
  Resource status_deserved;
  Resource status_guarantee;
  // spec.affinity.nodeGroupAffinity and nodeGroupAntiAffinity (nodegroup plugin).
  NodeGroupTerms node_group_affinity;
  NodeGroupTerms node_group_anti_affinity;
};

}  // namespace basalt::sched
