#include "scheduler/api/job_info.h"

#include <algorithm>

#include "fmt/format.h"

namespace basalt::sched {

std::string_view PodGroupPhaseName(PodGroupPhase p) {
  switch (p) {
    case PodGroupPhase::kPending:
      return "Pending";
    case PodGroupPhase::kInqueue:
      return "Inqueue";
    case PodGroupPhase::kRunning:
      return "Running";
    case PodGroupPhase::kUnknown:
      return "Unknown";
    case PodGroupPhase::kCompleted:
      return "Completed";
  }
  return "Unknown";
}

bool PodGroupStatus::SameAs(const PodGroupStatus& o) const {
  if (phase != o.phase || running != o.running || succeeded != o.succeeded || failed != o.failed ||
      conditions.size() != o.conditions.size()) {
    return false;
  }
  for (const auto& c : conditions) {
    const PodGroupCondition* other = o.FindCondition(c.type);
    if (other == nullptr || !c.SameAs(*other)) return false;
  }
  return true;
}

void PodGroupStatus::SetCondition(PodGroupCondition c) {
  for (auto& existing : conditions) {
    if (existing.type == c.type) {
      existing = std::move(c);
      return;
    }
  }
  conditions.push_back(std::move(c));
}

const PodGroupCondition* PodGroupStatus::FindCondition(std::string_view type) const {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

JobInfo::JobInfo(std::string ns, std::string n)
    : uid(ns + "/" + n), name(std::move(n)), namespace_name(std::move(ns)) {}

TaskInfo* JobInfo::AddTask(TaskInfo task) {
  std::string id = task.uid;
  auto [it, inserted] = tasks_.emplace(id, std::move(task));
  if (!inserted) return nullptr;
  TaskInfo* t = &it->second;
  status_index_[t->status][id] = t;
  total_request_ += t->resreq;
  if (IsAllocatedStatus(t->status)) allocated_ += t->resreq;
  return t;
}

TaskInfo* JobInfo::FindTask(const std::string& task_uid) {
  auto it = tasks_.find(task_uid);
  return it == tasks_.end() ? nullptr : &it->second;
}

absl::Status JobInfo::RemoveTask(const std::string& task_uid) {
  auto it = tasks_.find(task_uid);
  if (it == tasks_.end()) {
    return absl::NotFoundError(fmt::format("task {} not in job {}", task_uid, uid));
  }
  TaskInfo& t = it->second;
  auto idx = status_index_.find(t.status);
  if (idx != status_index_.end()) {
    idx->second.erase(task_uid);
    if (idx->second.empty()) status_index_.erase(idx);
  }
  if (IsAllocatedStatus(t.status)) allocated_ -= t.resreq;
  total_request_ -= t.resreq;
  tasks_.erase(it);
  return absl::OkStatus();
}

JobInfo JobInfo::Clone() const {
  JobInfo out(namespace_name, name);
  out.uid = uid;
  out.queue = queue;
  out.min_available = min_available;
  out.task_min_available = task_min_available;
  out.min_resources = min_resources;
  out.priority = priority;
  out.priority_class_name = priority_class_name;
  out.preemptable = preemptable;
  out.not_preemptable = not_preemptable;
  out.creation_time = creation_time;
  out.pods_precede_group = pods_precede_group;
  out.shadow = shadow;
  out.network_topology = network_topology;
  out.sub_group_policies = sub_group_policies;
  out.task_topology_annotations = task_topology_annotations;
  out.podgroup_status = podgroup_status;
  out.nodes_fit_errors = nodes_fit_errors;
  out.job_fit_errors = job_fit_errors;
  out.never_fit_tasks = never_fit_tasks;
  out.never_fits = never_fits;
  for (const auto& [id, t] : tasks_) out.AddTask(t);
  return out;
}

std::optional<std::string> JobInfo::SubGroupOf(const TaskInfo& task, size_t* policy) const {
  for (size_t i = 0; i < sub_group_policies.size(); ++i) {
    const SubGroupPolicy& p = sub_group_policies[i];
    if (p.selector.has_value() && !p.selector->Matches(task.labels)) continue;
    std::string name = p.name;
    bool all = true;
    for (const std::string& key : p.match_label_keys) {
      auto it = task.labels->find(key);
      if (it == task.labels.end() || it->second.empty()) {
        all = false;
        break;
      }
      name += '-';
      name += it->second;
    }
    if (!all) continue;
    if (policy != nullptr) *policy = i;
    return name;
  }
  return std::nullopt;
}

std::map<std::string, SubGroup> JobInfo::SubGroups() {
  std::map<std::string, SubGroup> out;
  if (sub_group_policies.empty()) return out;
  for (auto& [uid, t] : tasks_) {
    size_t policy = 0;
    std::optional<std::string> name = SubGroupOf(t, &policy);
    if (!name.has_value()) continue;
    auto [it, inserted] = out.try_emplace(*name);
    SubGroup& g = it->second;
    if (inserted) {
      g.policy = policy;
      g.name = *name;
      g.size = sub_group_policies[policy].sub_group_size;
    }
    g.tasks.push_back(&t);
    if (IsAllocatedStatus(t.status) || t.status == TaskStatus::kSucceeded) ++g.ready;
    if (t.status == TaskStatus::kPipelined) ++g.waiting;
  }
  return out;
}

std::string JobInfo::SubGroupsShort() const {
  if (sub_group_policies.empty()) return "";
  // name -> (policy, placed tasks)
  std::map<std::string, std::pair<size_t, int>> placed;
  for (const auto& [uid, t] : tasks_) {
    size_t policy = 0;
    std::optional<std::string> name = SubGroupOf(t, &policy);
    if (!name.has_value()) continue;
    auto& [p, n] = placed[*name];
    p = policy;
    if (IsAllocatedStatus(t.status) || t.status == TaskStatus::kSucceeded ||
        t.status == TaskStatus::kPipelined) {
      ++n;
    }
  }
  std::vector<int> complete(sub_group_policies.size(), 0);
  for (const auto& [name, pn] : placed) {
    if (pn.second >= sub_group_policies[pn.first].sub_group_size) ++complete[pn.first];
  }
  for (size_t i = 0; i < sub_group_policies.size(); ++i) {
    const SubGroupPolicy& p = sub_group_policies[i];
    if (p.min_sub_groups > 0 && complete[i] < p.min_sub_groups) {
      return fmt::format("{}/{} sub-groups of {} complete", complete[i], p.min_sub_groups, p.name);
    }
  }
  return "";
}

void JobInfo::UpdateTaskStatus(TaskInfo* task, TaskStatus status) {
  auto idx = status_index_.find(task->status);
  if (idx != status_index_.end()) {
    idx->second.erase(task->uid);
    if (idx->second.empty()) status_index_.erase(idx);
  }
  if (IsAllocatedStatus(task->status)) allocated_ -= task->resreq;
  task->status = status;
  if (IsAllocatedStatus(status)) allocated_ += task->resreq;
  status_index_[status][task->uid] = task;
}

const std::map<std::string, TaskInfo*>& JobInfo::TasksWithStatus(TaskStatus status) const {
  static const std::map<std::string, TaskInfo*> kEmpty;
  auto it = status_index_.find(status);
  return it == status_index_.end() ? kEmpty : it->second;
}

int JobInfo::ReadyTaskNum() const {
  return TaskCount(TaskStatus::kBound) + TaskCount(TaskStatus::kBinding) +
         TaskCount(TaskStatus::kRunning) + TaskCount(TaskStatus::kAllocated) +
         TaskCount(TaskStatus::kSucceeded);
}

int JobInfo::WaitingTaskNum() const { return TaskCount(TaskStatus::kPipelined); }

int JobInfo::ValidTaskNum() const {
  return ReadyTaskNum() + TaskCount(TaskStatus::kPipelined) + TaskCount(TaskStatus::kPending);
}

int JobInfo::PendingBestEffortTaskNum() const {
  int n = 0;
  for (const auto& [id, t] : TasksWithStatus(TaskStatus::kPending)) {
    if (t->BestEffort()) ++n;
  }
  return n;
}

bool JobInfo::CheckTaskMinAvailable(bool with_pipelined) const {
  if (task_min_available.empty()) return true;
  int64_t sum = 0;  // int64: the sum of int32 minTaskMember values cannot overflow it
  for (const auto& [role, min] : task_min_available) sum += min;
  // Volcano skips the per-role check when minAvailable < the sum of minTaskMember.
  if (min_available < sum) return true;
  std::map<std::string, int32_t> counts;
  for (const auto& [id, t] : tasks_) {
    const bool counted = IsAllocatedStatus(t.status) || t.status == TaskStatus::kSucceeded ||
                         (t.status == TaskStatus::kPending && t.BestEffort()) ||
                         (with_pipelined && t.status == TaskStatus::kPipelined);
    if (counted) ++counts[t.role];
  }
  for (const auto& [role, min] : task_min_available) {
    if (counts[role] < min) return false;
  }
  return true;
}

namespace {
std::string SortedHistogram(const std::map<std::string, int>& h) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : h) parts.push_back(fmt::format("{} {}", v, k));
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ", ";
    out += p;
  }
  return out;
}
}  // namespace

TaskSchedulingReason JobInfo::TaskReason(const TaskInfo& task) const {
  TaskSchedulingReason r;
  const std::string key = task.Key();
  switch (task.status) {
    case TaskStatus::kAllocated:
      r.reason = "Schedulable";
      r.message =
          fmt::format("Pod {} can possibly be assigned to {}, once minAvailable is satisfied", key,
                      task.node_name);
      return r;
    case TaskStatus::kPipelined:
      r.reason = "Unschedulable";
      r.message = fmt::format(
          "Pod {} can possibly be assigned to {}, once resource is released and minAvailable is "
          "satisfied",
          key, task.node_name);
      r.nominated_node_name = task.node_name;
      return r;
    case TaskStatus::kPending: {
      if (task.last_transaction && task.last_transaction->status == TaskStatus::kAllocated) {
        r.reason = "Schedulable";
        r.message =
            fmt::format("Pod {} can possibly be assigned to {}, once minAvailable is satisfied",
                        key, task.last_transaction->node_name);
        return r;
      }
      r.reason = "Unschedulable";
      auto fe = nodes_fit_errors.find(task.uid);
      if (fe != nodes_fit_errors.end()) {
        r.message = fe->second.Error();
      } else if (!job_fit_errors.empty()) {
        r.message = job_fit_errors;
      } else {
        r.message = std::string(kAllNodesUnavailable);
      }
      return r;
    }
    default:
      r.reason = "Schedulable";
      return r;
  }
}

std::string JobInfo::FitError() const {
  std::map<std::string, int> statuses;
  for (const auto& [status, tasks] : status_index_) {
    if (!tasks.empty()) statuses[std::string(TaskStatusName(status))] += tasks.size();
  }
  statuses["minAvailable"] = min_available;
  std::string msg = fmt::format("{}, {}", kPodGroupNotReady, SortedHistogram(statuses));
  std::map<std::string, int> pending;
  for (const auto& [id, t] : TasksWithStatus(TaskStatus::kPending))
    ++pending[TaskReason(*t).reason];
  if (!pending.empty()) msg += fmt::format("; Pending: {}", SortedHistogram(pending));
  if (!job_fit_errors.empty()) {
    msg += fmt::format(". Origin reason is {}", job_fit_errors);
  } else {
    // Volcano takes the first task in map order; Basalt takes the first by task name so the
    // message is stable across cycles.
    const TaskInfo* first = nullptr;
    for (const auto& [id, fe] : nodes_fit_errors) {
      auto it = tasks_.find(id);
      if (it == tasks_.end()) continue;
      if (first == nullptr || it->second.name < first->name) first = &it->second;
    }
    if (first != nullptr) {
      msg += fmt::format(". Origin reason is {}: {}", first->name,
                         nodes_fit_errors.at(first->uid).Error());
    }
  }
  return msg;
}

}  // namespace basalt::sched
