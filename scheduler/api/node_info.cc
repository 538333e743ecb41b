#include "scheduler/api/node_info.h"

#include <algorithm>

#include "fmt/format.h"

namespace basalt::sched {

NodeInfo::NodeInfo(std::string name, Resource allocatable, int64_t max_pods)
    : future_idle_(allocatable),
      idle_(allocatable),
      max_pods_(max_pods),
      allocatable_(allocatable),
      name_(std::move(name)) {}

void NodeInfo::Account(const TaskInfo& task, TaskStatus status, int sign) {
  const Resource& req = task.resreq;
  auto add = [sign, &req](Resource& r) {
    if (sign > 0) {
      r += req;
    } else {
      r -= req;
    }
  };
  auto sub = [sign, &req](Resource& r) {
    if (sign > 0) {
      r -= req;
    } else {
      r += req;
    }
  };
  switch (status) {
    case TaskStatus::kReleasing:
      sub(idle_);
      add(releasing_);
      add(used_);
      pod_count_ += sign;
      break;
    case TaskStatus::kPipelined:
      add(pipelined_);
      break;
    default:
      sub(idle_);
      add(used_);
      pod_count_ += sign;
      break;
  }
  // Pipelined tasks hold no device: they are placed on the GPUs once they become Allocated.
  if (status != TaskStatus::kPipelined) {
    AccountGpus(task, sign);
    AccountVgpus(task, status, sign);
  }
  future_idle_ = idle_ + releasing_ - pipelined_;
}

void NodeInfo::AccountGpus(const TaskInfo& task, int sign) {
  if (task.gpu.Empty() || gpus_.empty()) return;
  if (sign > 0) {
    // Keep an assignment made on this node (a pod read back with its devices); choose otherwise.
    bool keep =
        task.gpu_node == name_ && static_cast<int32_t>(task.gpu_ids.size()) == task.gpu.count;
    for (int32_t i : task.gpu_ids) {
      keep = keep && i >= 0 && i < gpus_.size() && gpus_.free_milli()[i] >= task.gpu.milli;
    }
    if (!keep) {
      // idle_ already has the task taken out: what the placement leaves.
      task.gpu_ids = gpus_.ChooseOrMostFree(task.gpu, HostLeft{idle_.milli_cpu(), idle_.memory()});
      task.gpu_node = name_;
    }
    gpus_.Account(task.gpu_ids, task.gpu.milli, +1);
  } else if (task.gpu_node == name_) {
    gpus_.Account(task.gpu_ids, task.gpu.milli, -1);
  }
}

void NodeInfo::AccountVgpus(const TaskInfo& task, TaskStatus status, int sign) {
  if (task.vgpu == nullptr || task.vgpu->Empty() || vgpus_.empty()) return;
  if (sign < 0) {
    if (task.vgpu_node == name_) vgpus_.Account(task.vgpu_assignment, task.vgpu->group_key, -1);
    return;
  }
  // Keep an assignment made for this node (read back from the pod, or carried by an assumed
  // bind) while it still fits; choose one for a task being placed here.
  const bool placing = status == TaskStatus::kAllocated || status == TaskStatus::kBinding;
  if (task.vgpu_node != name_ || task.vgpu_assignment.empty() ||
      (placing && !vgpus_.Holds(task.vgpu_assignment))) {
    task.vgpu_assignment.clear();
    task.vgpu_node.clear();
    // A pod some other scheduler bound without an assignment holds no GPU, as in Volcano.
    if (!placing) return;
    VgpuFit fit = vgpus_.Fit(*task.vgpu, HostLeft{idle_.milli_cpu(), idle_.memory()});
    if (!fit.ok) return;
    task.vgpu_assignment = std::move(fit.assignment);
    task.vgpu_node = name_;
  }
  vgpus_.Account(task.vgpu_assignment, task.vgpu->group_key, +1);
}

bool NodeInfo::HostPortsConflict(const std::vector<HostPort>& ports) const {
  for (const HostPort& want : ports) {
    for (const HostPort& used : used_ports_) {
      if (want.ConflictsWith(used)) return true;
    }
  }
  return false;
}

absl::Status NodeInfo::AddTask(TaskInfo* task) {
  if (tasks_.count(task->uid) != 0) {
    return absl::AlreadyExistsError(
        fmt::format("task {} is already on node {}", task->Key(), name_));
  }
  if ((task->status == TaskStatus::kAllocated || task->status == TaskStatus::kBinding) &&
      (!task->resreq.LessEqual(idle_) || !GpuFits(*task) || !VgpuFits(*task))) {
    return absl::FailedPreconditionError(
        fmt::format("task {} ({}) does not fit on node {} (idle {})", task->Key(),
                    task->resreq.ToString(), name_, idle_.ToString()));
  }
  Account(*task, task->status, +1);
  used_ports_.insert(used_ports_.end(), task->host_ports.begin(), task->host_ports.end());
  tasks_.emplace(task->uid, task);
  return absl::OkStatus();
}

absl::Status NodeInfo::RemoveTask(const TaskInfo& task) {
  auto it = tasks_.find(task.uid);
  if (it == tasks_.end()) {
    return absl::NotFoundError(fmt::format("task {} is not on node {}", task.Key(), name_));
  }
  Account(task, task.status, -1);
  for (const HostPort& p : task.host_ports) {
    auto used = std::find(used_ports_.begin(), used_ports_.end(), p);
    if (used != used_ports_.end()) used_ports_.erase(used);
  }
  tasks_.erase(it);
  return absl::OkStatus();
}

absl::Status NodeInfo::UpdateTask(TaskInfo* task, TaskStatus old_status) {
  auto it = tasks_.find(task->uid);
  if (it == tasks_.end()) {
    return absl::NotFoundError(fmt::format("task {} is not on node {}", task->Key(), name_));
  }
  Account(*task, old_status, -1);
  if ((task->status == TaskStatus::kAllocated || task->status == TaskStatus::kBinding) &&
      old_status == TaskStatus::kPipelined &&
      (!task->resreq.LessEqual(idle_) || !GpuFits(*task) || !VgpuFits(*task))) {
    Account(*task, old_status, +1);
    return absl::FailedPreconditionError(
        fmt::format("task {} does not fit on node {}", task->Key(), name_));
  }
  Account(*task, task->status, +1);
  it->second = task;
  return absl::OkStatus();
}

}  // namespace basalt::sched
