#include "scheduler/api/cluster_info.h"

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched {

absl::Status ClusterInfo::AddNode(NodeInfo node) {
  std::string name = node.name();
  if (!nodes_.emplace(name, std::move(node)).second) {
    return absl::AlreadyExistsError(fmt::format("node {} already in snapshot", name));
  }
  return absl::OkStatus();
}

absl::Status ClusterInfo::AddQueue(QueueInfo queue) {
  std::string name = queue.name;
  if (!queues_.emplace(name, std::move(queue)).second) {
    return absl::AlreadyExistsError(fmt::format("queue {} already in snapshot", name));
  }
  return absl::OkStatus();
}

absl::Status ClusterInfo::AddJob(JobInfo job) {
  std::string id = job.uid;
  if (!job.tasks().empty()) {
    return absl::InvalidArgumentError(fmt::format("job {}: add tasks with AddTask", id));
  }
  if (!jobs_.emplace(id, std::move(job)).second) {
    return absl::AlreadyExistsError(fmt::format("job {} already in snapshot", id));
  }
  return absl::OkStatus();
}

absl::Status ClusterInfo::AddTask(TaskInfo task) {
  TaskInfo* added = nullptr;
  std::string key = task.Key();
  JobInfo* job = task.job_id.empty() ? nullptr : FindJob(task.job_id);
  if (job != nullptr) {
    added = job->AddTask(std::move(task));
  } else {
    std::string id = task.uid;
    auto [it, inserted] = foreign_tasks_.emplace(id, std::move(task));
    if (inserted) added = &it->second;
  }
  if (added == nullptr)
    return absl::AlreadyExistsError(fmt::format("task {} already in snapshot", key));
  if (!added->node_name.empty()) {
    if (NodeInfo* node = FindNode(added->node_name); node != nullptr) return node->AddTask(added);
  }
  return absl::OkStatus();
}

absl::Status ClusterInfo::RemoveTask(const std::string& job_id, const std::string& task_uid) {
  JobInfo* job = job_id.empty() ? nullptr : FindJob(job_id);
  TaskInfo* task = nullptr;
  if (job != nullptr) {
    task = job->FindTask(task_uid);
  } else if (auto it = foreign_tasks_.find(task_uid); it != foreign_tasks_.end()) {
    task = &it->second;
  }
  if (task == nullptr) return absl::NotFoundError(fmt::format("task {} not in snapshot", task_uid));
  if (NodeInfo* node = FindNode(task->node_name);
      node != nullptr && node->tasks().count(task_uid)) {
    BASALT_RETURN_IF_ERROR(node->RemoveTask(*task));
  }
  if (job != nullptr) return job->RemoveTask(task_uid);
  foreign_tasks_.erase(task_uid);
  return absl::OkStatus();
}

ClusterInfo ClusterInfo::Clone() const {
  ClusterInfo out;
  out.queues_ = queues_;
  out.foreign_tasks_ = foreign_tasks_;
  out.hypernodes_ = hypernodes_;
  for (const auto& [id, job] : jobs_) out.jobs_.emplace(id, job.Clone());
  out.nodes_ = nodes_;
  for (auto& [name, node] : out.nodes_) {
    node.RebindTasks([&out](const TaskInfo& old) -> TaskInfo* {
      if (!old.job_id.empty()) {
        if (JobInfo* j = out.FindJob(old.job_id); j != nullptr) return j->FindTask(old.uid);
      }
      auto it = out.foreign_tasks_.find(old.uid);
      return it == out.foreign_tasks_.end() ? nullptr : &it->second;
    });
  }
  return out;
}

JobInfo* ClusterInfo::FindJob(const std::string& id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

NodeInfo* ClusterInfo::FindNode(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

QueueInfo* ClusterInfo::FindQueue(const std::string& name) {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : &it->second;
}

}  // namespace basalt::sched
