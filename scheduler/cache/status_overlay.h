#pragma once
// StatusOverlay holds the status the status writer sent (PodGroup status, a pod's PodScheduled
// condition, a queue's status.allocated) until the informer reports the same, so that a cycle
// running before the watch catches up reads what was written and does not write it again.
// A written value is dropped when the API shows it, when it no longer applies (the pod was
// bound, the PodGroup recreated), when its object goes, or when the write failed (Forget*: a
// later cycle writes it again).
//
// Thread-compatible: the owner (ClusterState) calls it under its mutex and applies the values
// to its ClusterInfo.

#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "scheduler/api/job_info.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"

namespace basalt::sched::cache {

class StatusOverlay {
 public:
  StatusOverlay() = default;
  StatusOverlay(const StatusOverlay&) = delete;
  StatusOverlay& operator=(const StatusOverlay&) = delete;

  // ---- PodGroup status, by job id "<namespace>/<name>" ----
  void SetPodGroupStatus(const std::string& job_id, const PodGroupStatus& status) {
    podgroups_[job_id] = status;
  }
  void ForgetPodGroupStatus(const std::string& job_id) { podgroups_.erase(job_id); }
  // The written status, or null.
  const PodGroupStatus* PodGroupStatusFor(const std::string& job_id) const;
  // The informer reported the PodGroup with `api_status` (`recreated`: under a new uid). Drops
  // the written status once the API shows it, or when the PodGroup is another incarnation.
  void ObservePodGroup(const std::string& job_id, const PodGroupStatus& api_status, bool recreated);

  // ---- Pod PodScheduled condition, by pod uid ----
  void SetPodCondition(const std::string& uid, const PodScheduledCondition& condition) {
    pods_[uid] = condition;
  }
  void ForgetPodCondition(const std::string& uid) { pods_.erase(uid); }
  const PodScheduledCondition* PodConditionFor(const std::string& uid) const;
  // The informer reported the pod carrying `api_condition`; `bound`: it has a node (and so
  // needs no PodScheduled=False condition any more).
  void ObservePod(const std::string& uid,
                  const SharedOptional<PodScheduledCondition>& api_condition, bool bound);

  // ---- Queue status.allocated, by queue name ----
  void SetQueueAllocated(const std::string& queue, const Resource& allocated) {
    queues_[queue] = allocated;
  }
  void ForgetQueueAllocated(const std::string& queue) { queues_.erase(queue); }
  const Resource* QueueAllocatedFor(const std::string& queue) const;
  void ObserveQueue(const std::string& queue, const Resource& api_allocated);

  size_t size() const { return podgroups_.size() + pods_.size() + queues_.size(); }

 private:
  std::map<std::string, PodGroupStatus> podgroups_;
  std::unordered_map<std::string, PodScheduledCondition> pods_;
  std::map<std::string, Resource> queues_;
};

}  // namespace basalt::sched::cache
