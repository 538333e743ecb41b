#include "scheduler/api/cluster_info.h"

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
