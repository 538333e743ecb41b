#pragma once
// ClusterState is the scheduler's incremental view of the cluster: informer event handlers
// apply each pod, node, PodGroup, Queue and PriorityClass change to one long-lived ClusterInfo
// (decision 6), and each scheduling cycle takes a consistent deep copy of it (TakeSnapshot).
//
// Which pods it keeps (decision 5): every pod bound to a node, whatever its scheduler (so
// nodes are never oversubscribed), and unbound pods whose schedulerName is one of ours.
// A pod joins a job when its annotation scheduling.k8s.io/group-name (or Volcano's
// scheduling.volcano.sh/group-name) names a PodGroup of its namespace and, when both the pod
// and the PodGroup have a controller owner, the owners' UIDs are equal (decision 3: pods of a
// deleted job never join the gang of a new job with the same name). Other pods are kept as
// foreign tasks: they use node resources but are never scheduled.
//
// Shadow jobs (issue 17): a pod of ours with no controller owner, no
// scheduling.volcano.sh/group-min-member annotation and no group annotation (or the one the
// podgroup controller writes for it) is, until PodGroup `podgroup-<pod uid>` is seen, the task
// of a gang of one kept only here (ShadowJobName, ToShadowJobInfo), under the same job id as
// that PodGroup ("<ns>/podgroup-<pod uid>"): it is scheduled without waiting for the
// controller's PodGroup and annotation. When the PodGroup appears the task moves into the real
// job keeping its status and node (an assumed placement stays assumed: no second placement, no
// second bind); the shadow job goes when its pod does. Owned pods never get one.
//
// Assumed placements: Assume() puts a task on its node at once (status Binding) so the next
// cycle does not place anything on the same resources; the assumption lasts until the informer
// reports the pod bound, or Forget() rolls it back after a failed bind.
//
// Snapshots: each cycle takes a copy of the ClusterInfo through the Snapshotter (which reuses
// the previous cycle's copy where nothing changed; ClusterState tells it what changed).
//
// Written status: what the status writer sent (PodGroup status, pod PodScheduled condition,
// queue allocated) is kept in a StatusOverlay and overrides the informer's copy until the
// informer reports the same, so a cycle that runs before the watch catches up does not write
// the same change again.
//
// Thread-safe (one mutex, which also guards the Snapshotter and the StatusOverlay); handlers,
// binder and status writer threads call it concurrently.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/status.h"
#include "common/api/compact.h"
#include "common/api/object.h"
#include "common/api/scheduling.h"
#include "common/api/topology.h"
#include "common/util/clock.h"
#include "scheduler/api/cluster_info.h"
#include "scheduler/cache/convert.h"
#include "scheduler/cache/snapshotter.h"
#include "scheduler/cache/status_overlay.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

struct ClusterStateOptions {
  std::set<std::string, std::less<>> scheduler_names = {"volcano"};
  std::string default_queue = "default";
  // Snapshots are updated in place from the previous cycle's (ReturnSnapshot) where nothing
  // changed; every `full_snapshot_every`-th snapshot is a complete copy regardless. false: every
  // snapshot is a complete copy.
  bool incremental_snapshots = true;
  int full_snapshot_every = 100;
  // Compare every reused snapshot's content with a complete copy (see Snapshotter); on in
  // debug builds.
  bool verify_snapshots = kVerifySnapshotsByDefault;
  // Times WaitForChange; nullptr means Clock::Real(). Must outlive the ClusterState.
  Clock* clock = nullptr;
};

class ClusterState {
 public:
  explicit ClusterState(ClusterStateOptions options);
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // ---- Informer events ----
  void UpsertPod(std::shared_ptr<const CachedPod> pod);
  void DeletePod(const api::CompactPod& pod);
  void UpsertNode(std::shared_ptr<const api::CompactNode> node);
  void DeleteNode(const std::string& name);
  void UpsertPodGroup(std::shared_ptr<const CachedPodGroup> pg);
  // Converts with ToCachedPodGroup (for callers holding a whole PodGroup, such as tests).
  void UpsertPodGroup(const std::shared_ptr<const api::PodGroup>& pg) {
    UpsertPodGroup(std::make_shared<const CachedPodGroup>(ToCachedPodGroup(*pg)));
  }
  void DeletePodGroup(const std::string& namespace_name, const std::string& name);
  void UpsertQueue(const api::Queue& queue);
  void DeleteQueue(const std::string& name);
  void UpsertPriorityClass(const std::string& name, int32_t value, bool global_default);
  void DeletePriorityClass(const std::string& name);
  // HyperNodes: every snapshot taken afterwards shares the new (immutable) map.
  void UpsertHyperNode(const api::HyperNode& hn);
  void DeleteHyperNode(const std::string& name);

  // ---- Cycles ----
  struct Snapshot {
    ClusterInfo cluster;
    uint64_t generation = 0;
    uint64_t arrivals = 0;  // arrivals() when taken
    uint64_t handout = 0;   // pass back to ReturnSnapshot
  };
  // A consistent copy of the current state for one session, with job priorities resolved from
  // PriorityClasses (spec.priorityClassName, else the globalDefault class, else 0) and no
  // session state (fit errors) left.
  //
  // Incremental (decision 6): when the previous cycle's snapshot was handed back with
  // ReturnSnapshot, only what changed since is copied into it: jobs, nodes and foreign tasks
  // the informers or binds touched (tracked per object as they happen), jobs the session could
  // have changed (those with tasks not yet settled when handed out, or evicted from), and the
  // nodes their tasks sit on. Queues, PodGroup statuses and priorities are small and refreshed
  // every time. The result equals a complete copy (checked by content with
  // `verify_snapshots`, and unit-tested against one).
  Snapshot TakeSnapshot();
  // Hands a session's snapshot back after the cycle, for the next TakeSnapshot to update.
  // Optional: without it the next snapshot is a complete copy.
  // A snapshot other than the last one handed out is dropped.
  void ReturnSnapshot(ClusterInfo used, uint64_t handout);
  // A complete copy, whatever the options (what TakeSnapshot must equal).
  Snapshot TakeFullSnapshot() const;
  SnapshotStats snapshot_stats() const;
  // Incremented on every change that may let a cycle do something new.
  uint64_t generation() const;
  // Waits until generation() != `seen`, `timeout` passes on the clock or `stop` fires (which
  // wakes it at once). Returns true if it changed.
  bool WaitForChange(uint64_t seen, std::chrono::milliseconds timeout,
                     const std::stop_token& stop) const;
  // Wakes WaitForChange callers (e.g. after a config reload).
  void Touch();
  // New work to place: incremented when a pod of ours that needs a node (unbound, not
  // terminating) first appears or joins a group (its group annotation is written), or a
  // PodGroup first appears. The scheduling loop runs a cycle soon after an arrival instead of
  // waiting out its period (the other changes — status updates, binds seen back, node
  // heartbeats — wait for the period). `first_since_snapshot` is when the first
  // arrival after the last TakeSnapshot happened (meaningless when `count` is unchanged).
  struct Arrivals {
    uint64_t count = 0;
    Clock::TimePoint first_since_snapshot;
  };
  Arrivals arrivals() const;

  // ---- Binding ----
  // Puts the task on `request.node_name` as Binding. kNotFound if the pod is gone,
  // kAlreadyExists if it is already bound, kFailedPrecondition if it no longer fits.
  absl::Status Assume(const BindRequest& request);
  // Rolls an assumption back (the bind failed): the pod is Pending again.
  void Forget(const std::string& task_uid);
  size_t assumed_count() const;

  // ---- Evicting ----
  // The evictor sent (or is about to send) the delete of this pod: its task is Releasing in
  // every snapshot from now on, until the informer reports the pod terminating or gone, so a
  // cycle that runs before the watch catches up does not choose more victims for the same
  // preemptor. No-op for an unknown pod.
  void AssumeEvicted(const std::string& task_uid);
  // The delete failed: the task is what the informer last reported again.
  void ForgetEvicted(const std::string& task_uid);
  size_t evicting_count() const;

  // ---- Written status ----
  void SetPodGroupStatus(const std::string& job_id, const PodGroupStatus& status);
  void ForgetPodGroupStatus(const std::string& job_id);
  void SetPodCondition(const std::string& task_uid, const PodScheduledCondition& condition);
  void ForgetPodCondition(const std::string& task_uid);
  void SetQueueAllocated(const std::string& queue, const Resource& allocated);
  void ForgetQueueAllocated(const std::string& queue);
  // status.allocated as the API server last reported it.
  Resource QueueAllocatedInApi(const std::string& queue) const;
  // status.deserved and status.guarantee being written (those set) are kept on the cached queue
  // so the next cycle does not write them again (until the informer reports the queue, which
  // then shows them or causes one more write). Returns what the cache held before.
  struct QueueShareStatus {
    Resource deserved;
    Resource guarantee;
  };
  QueueShareStatus SetQueueShare(const std::string& queue, const std::optional<Resource>& deserved,
                                 const std::optional<Resource>& guarantee);

  // The group annotation to write on a pod with its bind (issue 17): the name of its shadow
  // job (podgroup-<pod uid>, the PodGroup the podgroup controller makes for it) when the pod
  // may have one and carries no group annotation yet; "" otherwise (unknown pod included).
  std::string BarePodGroupName(const std::string& task_uid) const;

  // References for events (uid included); nullopt if unknown.
  std::optional<api::ObjectReference> PodReference(const std::string& namespace_name,
                                                   const std::string& name) const;
  std::optional<api::ObjectReference> PodGroupReference(const std::string& namespace_name,
                                                        const std::string& name) const;

 private:
  struct PodEntry {
    std::shared_ptr<const CachedPod> pod;
    bool in_cluster = false;
    std::string job_id;     // where the task sits in cluster_ ("" = foreign)
    std::string node_name;  // the task's node in cluster_ ("" = none)
  };
  struct PodGroupEntry {
    std::shared_ptr<const CachedPodGroup> pg;
    std::string owner_uid;
  };

  bool Relevant(const api::CompactPod& pod) const;
  static std::string GroupKey(const api::CompactPod& pod);
  // The group the pod is indexed under (pods_by_group_): its group annotation's key, else the
  // key of its shadow job, else "".
  std::string IndexKey(const CachedPod& cached) const;
  // The job the pod belongs to now ("" if none): its PodGroup's, else its shadow job's.
  // Requires mu_.
  std::string JobIdFor(const CachedPod& cached) const;
  // Take the pod's task out of / into cluster_. Require mu_.
  void RemoveTaskLocked(const std::string& uid);
  void InsertTaskLocked(const std::string& uid);
  void ReinsertLocked(const std::string& uid) {
    RemoveTaskLocked(uid);
    InsertTaskLocked(uid);
  }
  void RebuildJobLocked(const std::string& key);
  void BumpLocked();
  // An arrival (see arrivals()); also bumps the generation. Requires mu_.
  void ArrivalLocked();
  void ResolvePrioritiesLocked(ClusterInfo& cluster) const;

  const ClusterStateOptions options_;
  Clock* const clock_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  uint64_t generation_ = 1;                         // guarded by mu_
  uint64_t arrivals_ = 0;                           // guarded by mu_
  std::optional<Clock::TimePoint> first_arrival_;   // since the last snapshot; guarded by mu_
  ClusterInfo cluster_;                             // guarded by mu_
  std::unordered_map<std::string, PodEntry> pods_;  // by uid; guarded by mu_
  // "ns/name" -> a view of the pod's uid key in pods_ (as the indexes below); guarded by mu_
  std::unordered_map<std::string, std::string_view> pod_uid_by_key_;
  // The uids in the two indexes below view the keys of pods_ (unordered_map nodes never move),
  // so a pod costs one uid string however many indexes hold it. An entry leaves the indexes
  // before its pods_ entry is erased. Guarded by mu_.
  using UidSet = std::set<std::string_view>;
  std::map<std::string, UidSet> pods_by_group_;  // "ns/group"
  std::map<std::string, UidSet> pods_by_node_;
  std::map<std::string, std::string> assumed_;  // uid -> node; guarded by mu_
  // uid -> the vGPU assignment of an assumed bind (only vGPU tasks); guarded by mu_
  std::map<std::string, VgpuAssignment> assumed_vgpus_;
  std::set<std::string> evicting_;                                        // uids; guarded by mu_
  std::map<std::string, std::shared_ptr<const api::CompactNode>> nodes_;  // guarded by mu_
  std::map<std::string, PodGroupEntry> podgroups_;  // "ns/name"; guarded by mu_
  std::set<std::string> shadow_jobs_;  // ids of the shadow jobs in cluster_; guarded by mu_
  std::map<std::string, Resource> queue_api_allocated_;  // status.allocated; guarded by mu_
  struct PriorityClassEntry {
    int32_t value = 0;
    bool global_default = false;
  };
  std::map<std::string, PriorityClassEntry> priority_classes_;  // guarded by mu_

  Snapshotter snapshotter_;  // guarded by mu_
  StatusOverlay overlay_;    // guarded by mu_
};

}  // namespace basalt::sched::cache
