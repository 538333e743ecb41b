#pragma once
// The session's seams to the outside world. The real implementations live in scheduler/cache/
// (API binder, evictor, status writer); unit tests use recording fakes.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/api/job_info.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"
#include "scheduler/api/vgpu.h"

namespace basalt::sched {

struct BindRequest {
  std::string task_uid;
  std::string namespace_name;
  std::string pod_name;
  std::string node_name;
  // The GPUs chosen for a vGPU task (empty otherwise); written into the pod with the binding.
  VgpuAssignment vgpu = {};
};

// A Binder binds the tasks of a committed gang to their nodes. Bind() is called once per
// Statement commit (or per ready job dispatched by backfill) with all tasks committed together;
// it must not block the session: the implementation binds asynchronously, and on failure the
// cache rolls the assumed placement back and resyncs the pod. Implementations must be safe to
// call from the scheduling thread; the session does not call them concurrently.
class Binder {
 public:
  virtual ~Binder() = default;
  virtual void Bind(const std::string& job_id, std::vector<BindRequest> requests) = 0;
};

// Why a pod is evicted: the action ("preempt", "reclaim") and the job it makes room for, so the
// events can answer "who took my resources". Value type.
struct EvictionCause {
  std::string reason;           // the action
  std::string preemptor_job;    // "<namespace>/<podgroup>", "" if none
  std::string preemptor_queue;  // that job's queue
  int32_t preemptor_priority = 0;
  // "preempt: making room for job ns/online (queue default, priority 1000000)", or the reason
  // alone when there is no preemptor.
  std::string Message() const;
};

// An Evictor deletes a victim pod (preempt, reclaim) asynchronously, with the cause recorded in
// the events. Same threading contract as Binder.
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual void Evict(const TaskInfo& task, const EvictionCause& cause) = 0;
};

struct PodGroupStatusUpdate {
  std::string job_id;  // "<namespace>/<name>"
  std::string namespace_name;
  std::string name;
  PodGroupStatus status;
  // The status will change again shortly by itself: the PodGroup is Running with tasks bound
  // (or being bound) that do not run yet, so status.running is about to grow. The sink may
  // hold the write briefly so that the next one carries both.
  bool settling = false;
};

struct PodConditionUpdate {
  std::string task_uid;
  std::string namespace_name;
  std::string pod_name;
  // PodScheduled=False with this reason and message; nominated node if non-empty.
  PodScheduledCondition condition;
};

struct QueueStatusUpdate {
  std::string queue;
  Resource allocated;
  // Set only when the share plugin (proportion, capacity) computed a value other than the one
  // the queue's status shows (status.deserved, status.guarantee: a Basalt extension).
  std::optional<Resource> deserved{};
  std::optional<Resource> guarantee{};
};

struct EventRecord {
  std::string kind;  // "PodGroup", "Pod"
  std::string namespace_name;
  std::string name;
  std::string type;  // "Normal", "Warning"
  std::string reason;
  std::string message;
};

// A StatusSink receives what the session writes back when it closes. The session calls it only
// for objects whose status actually changed (decision 8: diffs, at most once per object per
// cycle); the implementation coalesces and sends them to the API server asynchronously.
class StatusSink {
 public:
  virtual ~StatusSink() = default;
  virtual void UpdatePodGroupStatus(PodGroupStatusUpdate update) = 0;
  virtual void UpdatePodCondition(PodConditionUpdate update) = 0;
  virtual void UpdateQueueStatus(QueueStatusUpdate update) = 0;
  virtual void RecordEvent(EventRecord event) = 0;
};

}  // namespace basalt::sched
