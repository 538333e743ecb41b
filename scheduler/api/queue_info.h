#pragma once
// QueueInfo is the scheduler's view of a scheduling.volcano.sh Queue. Value type.

#include <cstdint>
#include <optional>
#include <string>

#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"

namespace basalt::sched {

enum class QueueState { kOpen, kClosed, kClosing, kUnknown };

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
  Timestamp creation_time{};
  // status.allocated as last read from the API; the session writes it only when it changes.
  Resource status_allocated;
};

}  // namespace basalt::sched
