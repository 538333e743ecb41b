#pragma once
// NodeInfo is the scheduler's accounting view of one node: allocatable, idle, used,
// releasing and pipelined resources, labels, taints, pod count and the tasks placed on it.
// Tasks are not owned: they point into the ClusterInfo that owns this node (jobs own their
// tasks, the cluster owns tasks of pods outside any PodGroup). Not thread-safe.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/api/gpu_devices.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/task_info.h"
#include "scheduler/api/vgpu.h"

namespace basalt::sched {

class NodeInfo {
 public:
  NodeInfo() = default;
  NodeInfo(std::string name, Resource allocatable, int64_t max_pods = 110);

  const std::string& name() const { return name_; }
  const Resource& allocatable() const { return allocatable_; }
  const Resource& idle() const { return idle_; }
  const Resource& used() const { return used_; }
  const Resource& releasing() const { return releasing_; }
  const Resource& pipelined() const { return pipelined_; }
  // Idle + Releasing - Pipelined: what the node will have once releasing pods are gone.
  // Kept up to date on every change (it is read for every task/node pair).
  const Resource& FutureIdle() const { return future_idle_; }

  // The node's physical GPUs with the free share of each (empty: no per-GPU accounting; then
  // only the nvidia.com/gpu total is checked). Set before tasks are added.
  const GpuDevices& gpus() const { return gpus_; }
  // Mutable for a plugin's GPU choice cost (GpuDevices::set_choice_cost).
  GpuDevices& mutable_gpus() { return gpus_; }
  void set_gpus(GpuDevices gpus) { gpus_ = std::move(gpus); }
  // True if the task's GpuRequest fits on this node's GPUs (always true for a task without one;
  // false for a GPU task on a node without a device list).
  bool GpuFits(const TaskInfo& task) const {
    return task.gpu.Empty() || (!gpus_.empty() && gpus_.Fits(task.gpu));
  }

  // The node's vGPU devices as registered by the device plugin (empty: none). Set before tasks
  // are added. Mutable so the deviceshare plugin can set the session's device policy.
  const VgpuDevices& vgpus() const { return vgpus_; }
  VgpuDevices& vgpus() { return vgpus_; }
  void set_vgpus(VgpuDevices v) { vgpus_ = std::move(v); }
  // True if the task's vGPU request fits this node's vGPU devices (its own assignment here
  // still held, or a new one possible); always true for a task without one.
  bool VgpuFits(const TaskInfo& task) const {
    if (task.vgpu == nullptr || task.vgpu->Empty()) return true;
    if (vgpus_.empty()) return false;
    if (task.vgpu_node == name_ && !task.vgpu_assignment.empty() &&
        vgpus_.Holds(task.vgpu_assignment)) {
      return true;
    }
    return vgpus_.Fit(*task.vgpu).ok;
  }

  int64_t max_pods() const { return max_pods_; }
  // Pods counted against `pods` allocatable (every task on the node except Pipelined ones).
  int64_t pod_count() const { return pod_count_; }

  std::map<std::string, std::string>& labels() { return labels_; }
  const std::map<std::string, std::string>& labels() const { return labels_; }
  std::vector<Taint>& taints() { return taints_; }
  const std::vector<Taint>& taints() const { return taints_; }
  bool unschedulable() const { return unschedulable_; }
  void set_unschedulable(bool v) { unschedulable_ = v; }

  // Host ports held by the tasks on this node, one entry per task and port (every status,
  // Pipelined and Releasing included, as kube-scheduler counts every pod on the node).
  const std::vector<HostPort>& used_ports() const { return used_ports_; }
  // True if any of `ports` conflicts with a used port (HostPort::ConflictsWith).
  bool HostPortsConflict(const std::vector<HostPort>& ports) const;

  // Tasks on this node by uid (including Pipelined ones).
  const std::map<std::string, TaskInfo*>& tasks() const { return tasks_; }

  // Adds `task` (whose node_name must be this node) and its host ports with its current status:
  // Releasing -> idle -= req, releasing += req, used += req; Pipelined -> pipelined += req;
  // any other -> idle -= req, used += req. Allocated and Binding tasks must fit in Idle:
  // returns kFailedPrecondition otherwise, leaving the node unchanged. Tasks already running
  // on the node (reported by the kubelet) are accepted even if Idle goes negative.
  // Returns kAlreadyExists if the task is already on the node.
  absl::Status AddTask(TaskInfo* task);
  // Removes the task and its host ports, reversing what AddTask did for its *current* status.
  absl::Status RemoveTask(const TaskInfo& task);
  // After a copy of this node, points its tasks at `lookup(old task)` (the copies owned by the
  // new ClusterInfo); tasks for which lookup returns nullptr are dropped from the map only.
  template <typename Lookup>
  void RebindTasks(Lookup lookup) {
    // In place: a copy of a node with a hundred pods must not rebuild its map.
    for (auto it = tasks_.begin(); it != tasks_.end();) {
      if (TaskInfo* n = lookup(*it->second); n != nullptr) {
        it->second = n;
        ++it;
      } else {
        it = tasks_.erase(it);
      }
    }
  }
  // Re-accounts a task whose status changed from `old_status` to task->status.
  absl::Status UpdateTask(TaskInfo* task, TaskStatus old_status);

 private:
  void Account(const TaskInfo& task, TaskStatus status, int sign);
  void AccountGpus(const TaskInfo& task, int sign);
  void AccountVgpus(const TaskInfo& task, TaskStatus status, int sign);

  // What the allocate predicates and the node scores read for every sampled node of every task
  // comes first, so that one node costs the fewest cache lines (issue 17: the predicate pass
  // over ~500 nodes per task is memory-bound).
  Resource future_idle_;
  Resource idle_;
  int64_t pod_count_ = 0;
  int64_t max_pods_ = 110;
  std::vector<Taint> taints_;
  bool unschedulable_ = false;
  Resource used_;
  Resource allocatable_;
  // Read when a node is chosen or fails, and by the less common predicates.
  std::string name_;
  Resource releasing_;
  Resource pipelined_;
  GpuDevices gpus_;
  VgpuDevices vgpus_;
  std::map<std::string, std::string> labels_;
  std::vector<HostPort> used_ports_;
  std::map<std::string, TaskInfo*> tasks_;
};

}  // namespace basalt::sched
