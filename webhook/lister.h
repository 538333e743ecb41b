#pragma once
// ClusterLister: what admission decisions need to know about the cluster beyond the object
// under review (queues, how many PodGroups and Jobs use a queue, PriorityClasses, namespace
// default queues). The production implementation reads informer caches; FakeLister (in
// fake_lister.h) is an in-memory one for tests.
//
// Implementations must be thread-safe: the HTTP layer may call handlers concurrently. An
// informer-backed implementation should report the webhook not ready until its caches have
// synced, since answers from an empty cache would admit or refuse wrongly. Every call is on
// the admission path (the API server waits, default timeout 10 s): back ChildQueues and the
// counts by informer indexers on spec.parent / spec.queue, not by scanning every object.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace basalt::webhook {

// What admission reads of a Queue (scheduling.volcano.sh/v1beta1).
struct QueueInfo {
  std::string name;
  // status.state: "Open", "Closed", "Closing", "Unknown", or "" before the queue controller
  // has synced it (treated as Open, as the queue controller does).
  std::string state;
  // spec.parent; "" means root (or no hierarchy).
  std::string parent;
  // spec.capability as resource name -> quantity text.
  std::map<std::string, std::string> capability;
  // spec.deserved and spec.guarantee.resource, the same way.
  std::map<std::string, std::string> deserved;
  std::map<std::string, std::string> guarantee;
};

class ClusterLister {
 public:
  virtual ~ClusterLister() = default;

  // Returns kNotFound when no queue of that name exists; other codes when the lookup itself
  // failed.
  virtual absl::StatusOr<QueueInfo> GetQueue(std::string_view name) const = 0;
  // Names of the queues whose spec.parent is `name`, sorted.
  virtual std::vector<std::string> ChildQueues(std::string_view name) const = 0;
  // Number of PodGroups (all namespaces, any phase) whose spec.queue is `queue`.
  virtual int CountPodGroupsInQueue(std::string_view queue) const = 0;
  // Number of Jobs (all namespaces, any phase) whose spec.queue is `queue`.
  virtual int CountJobsInQueue(std::string_view queue) const = 0;
  // Whether the scheduling.k8s.io/v1 PriorityClass exists.
  virtual bool PriorityClassExists(std::string_view name) const = 0;
  // The value of annotation scheduling.volcano.sh/queue-name on namespace `ns`, or "".
  virtual std::string NamespaceDefaultQueue(std::string_view ns) const = 0;
};

}  // namespace basalt::webhook
