#pragma once
// FakeLister: an in-memory ClusterLister for tests, filled through setters. Thread-safe.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "webhook/lister.h"

namespace basalt::webhook {

class FakeLister : public ClusterLister {
 public:
  FakeLister() = default;
  FakeLister(const FakeLister&) = delete;
  FakeLister& operator=(const FakeLister&) = delete;

  // Adds or replaces a queue.
  void AddQueue(QueueInfo queue);
  // Convenience: AddQueue({name, state}).
  void AddQueue(std::string_view name, std::string_view state);
  void AddPodGroup(std::string_view ns, std::string_view name, std::string_view queue);
  void AddJob(std::string_view ns, std::string_view name, std::string_view queue);
  void AddPriorityClass(std::string_view name);
  void SetNamespaceDefaultQueue(std::string_view ns, std::string_view queue);
  // Makes GetQueue fail with `status` (not NotFound) to exercise lookup errors.
  void FailQueueLookups(absl::Status status);

  absl::StatusOr<QueueInfo> GetQueue(std::string_view name) const override;
  std::vector<std::string> ChildQueues(std::string_view name) const override;
  int CountPodGroupsInQueue(std::string_view queue) const override;
  int CountJobsInQueue(std::string_view queue) const override;
  bool PriorityClassExists(std::string_view name) const override;
  std::string NamespaceDefaultQueue(std::string_view ns) const override;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, QueueInfo, std::less<>> queues_ ABSL_GUARDED_BY(mu_);
  // namespace/name -> queue
  std::map<std::string, std::string> podgroups_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> jobs_ ABSL_GUARDED_BY(mu_);
  std::set<std::string, std::less<>> priority_classes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string, std::less<>> namespace_queues_ ABSL_GUARDED_BY(mu_);
  absl::Status queue_lookup_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace basalt::webhook
