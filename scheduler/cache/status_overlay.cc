// StatusOverlay: written status kept until the informer reports it.
#include "scheduler/cache/status_overlay.h"

namespace basalt::sched::cache {

const PodGroupStatus* StatusOverlay::PodGroupStatusFor(const std::string& job_id) const {
  auto it = podgroups_.find(job_id);
  return it == podgroups_.end() ? nullptr : &it->second;
}

void StatusOverlay::ObservePodGroup(const std::string& job_id, const PodGroupStatus& api_status,
                                    bool recreated) {
  auto it = podgroups_.find(job_id);
  if (it != podgroups_.end() && (recreated || api_status.SameAs(it->second))) podgroups_.erase(it);
}

const PodScheduledCondition* StatusOverlay::PodConditionFor(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

void StatusOverlay::ObservePod(const std::string& uid,
                               const SharedOptional<PodScheduledCondition>& api_condition,
                               bool bound) {
  auto it = pods_.find(uid);
  if (it != pods_.end() && (bound || api_condition == it->second)) pods_.erase(it);
}

const Resource* StatusOverlay::QueueAllocatedFor(const std::string& queue) const {
  auto it = queues_.find(queue);
  return it == queues_.end() ? nullptr : &it->second;
}

void StatusOverlay::ObserveQueue(const std::string& queue, const Resource& api_allocated) {
  auto it = queues_.find(queue);
  if (it != queues_.end() && it->second == api_allocated) queues_.erase(it);
}

}  // namespace basalt::sched::cache
