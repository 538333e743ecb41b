#pragma once
// InformerLister: the production ClusterLister, answering from shared informer caches of
// Queues, PodGroups, Jobs, PriorityClasses and Namespaces. Each cache keeps only what
// admission reads (a QueueInfo, the spec.queue of PodGroups and Jobs, the queue annotation of
// Namespaces, nothing but the name of PriorityClasses), not whole documents. Child queues and
// the per-queue counts come from indices on spec.parent and spec.queue, so no call scans a
// cache.
//
// A queue or PriorityClass missing from its cache is asked of the API server when a live client
// is given: one created a moment ago (local-up creates the default queue, then the user's first
// job names it) may not have reached the watch yet, and refusing a Job for a queue that exists
// is wrong. A miss is rare (it usually ends in a refusal), so the read costs nothing in the
// common case.
//
// Until HasSynced() the answers come from partial caches: until then the webhook reports
// not-ready and refuses reviews of the handlers that read them with a retryable 503 (the
// check in main, passed to RegisterAdmissionPaths).
//
// Thread-safety: thread-safe (the caches are). Ownership: borrows the factory, which owns
// the informers and must outlive this object.

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/client/client.h"
#include "common/informer/informer_factory.h"
#include "webhook/lister.h"

namespace basalt::webhook::server {

class InformerLister : public ClusterLister {
 public:
  // Registers its informers on `factory` (start them with factory->Start()). `live` (borrowed,
  // may be null) answers cache misses of queues and PriorityClasses.
  explicit InformerLister(informer::SharedInformerFactory* factory, client::Client* live = nullptr);
  InformerLister(const InformerLister&) = delete;
  InformerLister& operator=(const InformerLister&) = delete;

  // True once every cache has been filled by its first list.
  bool HasSynced() const;
  // The names of the caches that have not synced yet (for the readiness message).
  std::vector<std::string> Unsynced() const;

  absl::StatusOr<QueueInfo> GetQueue(std::string_view name) const override;
  std::vector<std::string> ChildQueues(std::string_view name) const override;
  int CountPodGroupsInQueue(std::string_view queue) const override;
  int CountJobsInQueue(std::string_view queue) const override;
  bool PriorityClassExists(std::string_view name) const override;
  std::string NamespaceDefaultQueue(std::string_view ns) const override;

 private:
  client::Client* const live_;
  informer::SharedInformer* queues_;
  informer::SharedInformer* podgroups_;
  informer::SharedInformer* jobs_;
  informer::SharedInformer* priority_classes_;
  informer::SharedInformer* namespaces_;
};

// Transforms and index functions, exposed for tests.
namespace lister_internal {
// spec.queue of a Job or PodGroup (namespaced), or the queue annotation of a Namespace.
struct QueueRef {
  std::string queue;
};
struct Presence {};
inline constexpr char kQueueIndex[] = "spec.queue";
inline constexpr char kParentIndex[] = "spec.parent";
// Decodes a Queue document into a QueueInfo.
absl::StatusOr<QueueInfo> QueueInfoFromDocument(const json::Document& doc);
informer::Transform QueueInfoTransform();
informer::Transform SpecQueueTransform();
informer::Transform NamespaceQueueTransform();
informer::Transform PresenceTransform();
informer::IndexFunc ParentIndexFunc();
informer::IndexFunc SpecQueueIndexFunc();
}  // namespace lister_internal

}  // namespace basalt::webhook::server
