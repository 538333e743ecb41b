#pragma once
// ClusterInfo is the snapshot a scheduling session works on: jobs (PodGroups with their pods),
// nodes and queues, plus tasks of pods outside any PodGroup that still use node resources
// (pods of other schedulers, pods bound directly).
//
// Building one (what the cache layer provides each cycle):
//   ClusterInfo c;
//   c.AddNode(NodeInfo("n1", allocatable, max_pods));      // labels/taints set on the node
//   c.AddQueue(QueueInfo{...});
//   c.AddJob(JobInfo(...));                                 // PodGroup fields, no tasks yet
//   c.AddTask(TaskInfo{...});                               // every pod, job_id may be empty
// AddTask puts a task into its job (or into the foreign tasks if job_id is empty or unknown)
// and, if node_name is set and the node exists, into the node's accounting.
//
// Movable, not copyable (nodes point at tasks owned by jobs; use Clone()). Not thread-safe.

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "scheduler/api/hypernode.h"
#include "scheduler/api/job_info.h"
#include "scheduler/api/node_info.h"
#include "scheduler/api/queue_info.h"

namespace basalt::sched {

class ClusterInfo {
 public:
  ClusterInfo() = default;
  ClusterInfo(ClusterInfo&&) = default;
  ClusterInfo& operator=(ClusterInfo&&) = default;
  ClusterInfo(const ClusterInfo&) = delete;
  ClusterInfo& operator=(const ClusterInfo&) = delete;

  // Returns kAlreadyExists on duplicates.
  absl::Status AddNode(NodeInfo node);
  absl::Status AddQueue(QueueInfo queue);
  // The job must not have tasks yet; add them with AddTask.
  absl::Status AddJob(JobInfo job);
  // Adds a pod. Returns kAlreadyExists for a duplicate uid. A task whose node is not in the
  // snapshot is kept in its job but accounts on no node.
  absl::Status AddTask(TaskInfo task);

  // Removes a pod: from its node's accounting, then from its job (or the foreign tasks).
  absl::Status RemoveTask(const std::string& job_id, const std::string& task_uid);
  // A deep copy whose nodes point at its own tasks. This is how a cache that keeps a
  // ClusterInfo up to date from informer events hands each session its own snapshot.
  ClusterInfo Clone() const;

  JobInfo* FindJob(const std::string& id);
  NodeInfo* FindNode(const std::string& name);
  QueueInfo* FindQueue(const std::string& name);
  const JobInfo* FindJob(const std::string& id) const {
    return const_cast<ClusterInfo*>(this)->FindJob(id);
  }
  const NodeInfo* FindNode(const std::string& name) const {
    return const_cast<ClusterInfo*>(this)->FindNode(name);
  }
  const QueueInfo* FindQueue(const std::string& name) const {
    return const_cast<ClusterInfo*>(this)->FindQueue(name);
  }

  std::map<std::string, JobInfo>& jobs() { return jobs_; }
  const std::map<std::string, JobInfo>& jobs() const { return jobs_; }
  std::map<std::string, NodeInfo>& nodes() { return nodes_; }
  const std::map<std::string, NodeInfo>& nodes() const { return nodes_; }
  std::map<std::string, QueueInfo>& queues() { return queues_; }
  const std::map<std::string, QueueInfo>& queues() const { return queues_; }
  const std::map<std::string, TaskInfo>& foreign_tasks() const { return foreign_tasks_; }
  // Mutable access for the cache's incremental snapshots; keep nodes' task pointers in step.
  std::map<std::string, TaskInfo>& mutable_foreign_tasks() { return foreign_tasks_; }
  // The HyperNodes (immutable, shared by every snapshot that saw the same set; never null).
  const HyperNodeMap& hypernodes() const { return *hypernodes_; }
  const std::shared_ptr<const HyperNodeMap>& shared_hypernodes() const { return hypernodes_; }
  void set_hypernodes(std::shared_ptr<const HyperNodeMap> h) {
    hypernodes_ = h != nullptr ? std::move(h) : std::make_shared<const HyperNodeMap>();
  }

 private:
  std::map<std::string, JobInfo> jobs_;
  std::map<std::string, NodeInfo> nodes_;
  std::map<std::string, QueueInfo> queues_;
  std::map<std::string, TaskInfo> foreign_tasks_;
  std::shared_ptr<const HyperNodeMap> hypernodes_ = std::make_shared<const HyperNodeMap>();
};

}  // namespace basalt::sched
