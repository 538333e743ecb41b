// Session, part 2: job and task state changes (allocate, pipeline, evict, their undo, and
// dispatch to the binder), each firing the plugins' allocate/deallocate handlers; and Close,
// which derives each PodGroup's new status and writes what changed (PodGroup status, pod
// conditions, queue allocated, events) to the StatusSink. Registration and dispatch are in
// session.cc.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

// ---------------------------------------------------------------------------------------------
// State changes

void Session::FireAllocate(const TaskInfo& task) {
  for (const auto& h : event_handlers_) {
    if (h.on_allocate) h.on_allocate(task);
  }
}

void Session::FireDeallocate(const TaskInfo& task) {
  for (const auto& h : event_handlers_) {
    if (h.on_deallocate) h.on_deallocate(task);
  }
}

absl::Status Session::DoAllocate(TaskInfo* task, NodeInfo* node) {
  JobInfo* job = FindJob(task->job_id);
  if (job == nullptr)
    return absl::NotFoundError(fmt::format("job of task {} not found", task->Key()));
  if (task->status != TaskStatus::kPending) {
    return absl::FailedPreconditionError(
        fmt::format("task {} is {}, not Pending", task->Key(), TaskStatusName(task->status)));
  }
  if (!task->resreq.LessEqual(node->idle())) {
    return absl::FailedPreconditionError(
        fmt::format("task {} does not fit on node {}: needs {}, idle {}", task->Key(), node->name(),
                    task->resreq.ToString(), node->idle().ToString()));
  }
  task->node_name = node->name();
  job->UpdateTaskStatus(task, TaskStatus::kAllocated);
  if (absl::Status s = node->AddTask(task); !s.ok()) {
    job->UpdateTaskStatus(task, TaskStatus::kPending);
    task->node_name.clear();
    return s;
  }
  FireAllocate(*task);
  return absl::OkStatus();
}

absl::Status Session::DoPipeline(TaskInfo* task, NodeInfo* node) {
  JobInfo* job = FindJob(task->job_id);
  if (job == nullptr)
    return absl::NotFoundError(fmt::format("job of task {} not found", task->Key()));
  if (task->status != TaskStatus::kPending) {
    return absl::FailedPreconditionError(
        fmt::format("task {} is {}, not Pending", task->Key(), TaskStatusName(task->status)));
  }
  task->node_name = node->name();
  job->UpdateTaskStatus(task, TaskStatus::kPipelined);
  if (absl::Status s = node->AddTask(task); !s.ok()) {
    job->UpdateTaskStatus(task, TaskStatus::kPending);
    task->node_name.clear();
    return s;
  }
  FireAllocate(*task);
  return absl::OkStatus();
}

absl::Status Session::DoEvict(TaskInfo* task) {
  JobInfo* job = FindJob(task->job_id);
  NodeInfo* node = FindNode(task->node_name);
  if (job == nullptr || node == nullptr) {
    return absl::NotFoundError(fmt::format("job or node of task {} not found", task->Key()));
  }
  TaskStatus old = task->status;
  if (old != TaskStatus::kRunning && old != TaskStatus::kBound) {
    return absl::FailedPreconditionError(
        fmt::format("task {} is {}, not Running or Bound", task->Key(), TaskStatusName(old)));
  }
  job->UpdateTaskStatus(task, TaskStatus::kReleasing);
  if (absl::Status s = node->UpdateTask(task, old); !s.ok()) {
    job->UpdateTaskStatus(task, old);
    return s;
  }
  FireDeallocate(*task);
  return absl::OkStatus();
}

void Session::UndoAllocate(TaskInfo* task) {
  JobInfo* job = FindJob(task->job_id);
  if (NodeInfo* node = FindNode(task->node_name); node != nullptr) {
    if (absl::Status s = node->RemoveTask(*task); !s.ok()) {
      BASALT_LOG_ERROR("Undo allocate: node accounting broken", "task", task->Key(), "error",
                       MessageOf(s));
    }
  }
  task->last_transaction = LastTransaction{task->status, task->node_name};
  if (job != nullptr) job->UpdateTaskStatus(task, TaskStatus::kPending);
  task->node_name.clear();
  FireDeallocate(*task);
}

void Session::UndoPipeline(TaskInfo* task) { UndoAllocate(task); }

void Session::UndoEvict(TaskInfo* task, TaskStatus previous) {
  JobInfo* job = FindJob(task->job_id);
  NodeInfo* node = FindNode(task->node_name);
  if (job == nullptr || node == nullptr) return;
  TaskStatus old = task->status;
  job->UpdateTaskStatus(task, previous);
  if (absl::Status s = node->UpdateTask(task, old); !s.ok()) {
    BASALT_LOG_ERROR("Undo evict: node accounting broken", "task", task->Key(), "error",
                     MessageOf(s));
  }
  FireAllocate(*task);
}

void Session::Dispatch(const std::vector<TaskInfo*>& tasks) {
  std::map<std::string, std::vector<BindRequest>> by_job;
  for (TaskInfo* task : tasks) {
    if (task->status != TaskStatus::kAllocated) continue;
    JobInfo* job = FindJob(task->job_id);
    NodeInfo* node = FindNode(task->node_name);
    if (job == nullptr || node == nullptr) continue;
    job->UpdateTaskStatus(task, TaskStatus::kBinding);
    ++dispatched_;
    if (options_.report != nullptr && task->creation_time != Timestamp{}) {
      task_latencies_.push_back(std::max(std::chrono::nanoseconds::zero(),
                                         std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             options_.now - task->creation_time)));
    }
    if (absl::Status s = node->UpdateTask(task, TaskStatus::kAllocated); !s.ok()) {
      BASALT_LOG_ERROR("Dispatch: node accounting broken", "task", task->Key(), "error",
                       MessageOf(s));
    }
    BindRequest request{task->uid, task->namespace_name, task->name, task->node_name};
    if (task->vgpu != nullptr && task->vgpu_node == task->node_name) {
      request.vgpu = task->vgpu_assignment;
    }
    by_job[task->job_id].push_back(std::move(request));
  }
  if (options_.binder == nullptr) return;
  for (auto& [job_id, requests] : by_job) options_.binder->Bind(job_id, std::move(requests));
}

void Session::SendEviction(const TaskInfo& task, const EvictionCause& cause) {
  ++evictions_;
  if (options_.evictor != nullptr) options_.evictor->Evict(task, cause);
}

absl::Status Session::Allocate(TaskInfo* task, NodeInfo* node) {
  BASALT_RETURN_IF_ERROR(DoAllocate(task, node));
  JobInfo* job = FindJob(task->job_id);
  if (job != nullptr && JobReady(*job)) {
    std::vector<TaskInfo*> ready;
    for (const auto& [id, t] : job->TasksWithStatus(TaskStatus::kAllocated)) ready.push_back(t);
    Dispatch(ready);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Close

namespace {

PodGroupPhase NewPhase(const JobInfo& job, const std::string& session_uid) {
  const PodGroupCondition* unsched = job.podgroup_status.FindCondition(kConditionUnschedulable);
  if (job.TaskCount(TaskStatus::kRunning) > 0 && unsched != nullptr && unsched->status == "True" &&
      unsched->transition_id == session_uid) {
    return PodGroupPhase::kUnknown;
  }
  int scheduled = 0;
  int completed = 0;
  for (const auto& [id, t] : job.tasks()) {
    // A task whose bind is in flight (Binding) counts, as in Volcano (its allocated tasks
    // make a gang Running): the PodGroup turns Running in the cycle that placed the gang, in
    // the same write as its Scheduled condition, not one write (Inqueue + Scheduled) and a
    // cycle later. A failed bind puts the task back to Pending and the phase back next cycle.
    if (IsScheduledStatus(t.status) || t.status == TaskStatus::kBinding ||
        (t.status == TaskStatus::kReleasing && !t.node_name.empty())) {
      ++scheduled;
      if (IsCompletedStatus(t.status)) ++completed;
    }
  }
  if (scheduled >= job.min_available && scheduled > 0) {
    return completed == scheduled ? PodGroupPhase::kCompleted : PodGroupPhase::kRunning;
  }
  if (job.podgroup_status.phase == PodGroupPhase::kInqueue) return PodGroupPhase::kInqueue;
  return PodGroupPhase::kPending;
}

// The PodGroup the podgroup controller makes for one bare pod: made for pods that precede it,
// and named podgroup-<uid> after its one task (the pod that owns it).
bool IsBarePodGroup(const JobInfo& job) {
  if (!job.pods_precede_group || job.tasks().size() != 1) return false;
  constexpr std::string_view kPrefix = "podgroup-";
  return job.name.size() > kPrefix.size() && job.name.compare(0, kPrefix.size(), kPrefix) == 0 &&
         job.tasks().count(job.name.substr(kPrefix.size())) != 0;
}

}  // namespace

void Session::WriteJobStatus(JobInfo& job, StatusSink* sink) {
  PodGroupStatus old = job.podgroup_status;
  auto saved = old_status_.find(job.uid);
  if (saved != old_status_.end()) old = saved->second;

  PodGroupStatus& status = job.podgroup_status;
  status.phase = NewPhase(job, options_.uid);
  status.running = job.TaskCount(TaskStatus::kRunning);
  status.succeeded = job.TaskCount(TaskStatus::kSucceeded);
  status.failed = job.TaskCount(TaskStatus::kFailed);
  if (status.SameAs(old)) return;
  if (sink == nullptr) return;
  if (job.shadow) return;  // no PodGroup object: nothing to write, no PodGroup event
  const bool settling =
      status.phase == PodGroupPhase::kRunning &&
      (job.TaskCount(TaskStatus::kBinding) > 0 || job.TaskCount(TaskStatus::kBound) > 0);
  sink->UpdatePodGroupStatus(
      PodGroupStatusUpdate{job.uid, job.namespace_name, job.name, status, settling});
  // Deliberately differs from Volcano, which emits this event on every cycle: Basalt emits it
  // only when the PodGroup's phase or conditions changed (not its pod counts), so a
  // long-pending gang does not flood the API and a running one does not repeat "Scheduled"
  // as its pods start. A gang admitted before its pods exist (a vcjob's PodGroup turning
  // Inqueue) gets none either: nothing of it is unschedulable.
  // The queue position (SetQueuePositions) changes as other jobs move; it is no reason for an
  // event of its own.
  auto without_position = [](const std::vector<PodGroupCondition>& conditions) {
    std::vector<const PodGroupCondition*> out;
    for (const auto& c : conditions) {
      if (c.type != kConditionQueuePosition) out.push_back(&c);
    }
    return out;
  };
  const auto now_conditions = without_position(status.conditions);
  const auto old_conditions = without_position(old.conditions);
  bool same_conditions = now_conditions.size() == old_conditions.size();
  for (size_t i = 0; same_conditions && i < now_conditions.size(); ++i) {
    same_conditions = now_conditions[i]->SameAs(*old_conditions[i]);
  }
  if (status.phase == old.phase && same_conditions) return;
  if (status.phase == PodGroupPhase::kInqueue && job.tasks().empty()) return;
  // Nor one whose pods are still being created (JobInfo::awaiting_pods): its condition says so.
  if (job.awaiting_pods && status.phase != PodGroupPhase::kUnknown) return;
  EventRecord event{"PodGroup", job.namespace_name, job.name, "", "", ""};
  if (status.phase == PodGroupPhase::kPending || status.phase == PodGroupPhase::kInqueue ||
      status.phase == PodGroupPhase::kUnknown) {
    event.type = "Warning";
    event.reason = "Unschedulable";
    event.message =
        fmt::format("{}/{} tasks in gang unschedulable: {}", job.TaskCount(TaskStatus::kPending),
                    job.tasks().size(), job.FitError());
  } else {
    // Deliberately differs from Volcano: a bare pod's PodGroup gets no `Scheduled` event; its
    // pod's own `Scheduled` event says where it went (issue 17: one event write per bare pod,
    // as kube-scheduler).
    if (IsBarePodGroup(job)) return;
    event.type = "Normal";
    event.reason = "Scheduled";
    event.message = std::string(kPodGroupReady);
  }
  sink->RecordEvent(std::move(event));
}

void Session::SetQueuePositions() {
  // Waiting: the phase this close will write is Pending or Inqueue (nothing of it runs yet).
  std::map<std::string, std::vector<JobInfo*>> waiting;
  for (auto& [id, job] : jobs()) {
    const PodGroupPhase phase = NewPhase(job, options_.uid);
    if (phase == PodGroupPhase::kPending || phase == PodGroupPhase::kInqueue) {
      waiting[job.queue].push_back(&job);
    } else {
      std::erase_if(job.podgroup_status.conditions,
                    [](const PodGroupCondition& c) { return c.type == kConditionQueuePosition; });
    }
  }
  for (auto& [queue, list] : waiting) {
    std::sort(list.begin(), list.end(),
              [this](const JobInfo* l, const JobInfo* r) { return JobOrder(*l, *r); });
    for (size_t i = 0; i < list.size(); ++i) {
      JobInfo& job = *list[i];
      const PodGroupCondition* had = job.podgroup_status.FindCondition(kConditionQueuePosition);
      // Every position write is a PodGroup status write, and the positions of a whole queue
      // shift with each arrival and each start: a job that starts within its first seconds
      // gets none, and a position that moved is rewritten at most every
      // kQueuePositionRefresh, unless this close writes the job's status anyway (its phase
      // changes).
      if (had == nullptr && options_.now - job.creation_time < kQueuePositionDelay) continue;
      auto saved = old_status_.find(job.uid);
      const PodGroupPhase written =
          saved != old_status_.end() ? saved->second.phase : job.podgroup_status.phase;
      if (had != nullptr && NewPhase(job, options_.uid) == written &&
          options_.now - had->last_transition_time < kQueuePositionRefresh) {
        continue;
      }
      PodGroupCondition c{std::string(kConditionQueuePosition),
                          "True",
                          options_.uid,
                          std::string(kReasonQueuePosition),
                          fmt::format("{}/{}", i + 1, list.size()),
                          options_.now};
      if (had != nullptr && had->SameAs(c)) continue;  // keep its transition time
      job.podgroup_status.SetCondition(std::move(c));
    }
  }
}

void Session::Close(StatusSink* sink) {
  for (auto& plugin : plugins_) {
    const auto start = std::chrono::steady_clock::now();
    plugin->OnSessionClose(*this);
    if (options_.report != nullptr) {
      options_.report->plugins.push_back(CycleReport::PluginTiming{
          std::string(plugin->Name()), false, std::chrono::steady_clock::now() - start});
    }
  }
  SetQueuePositions();
  for (auto& [id, job] : jobs()) {
    WriteJobStatus(job, sink);
    if (sink == nullptr) continue;
    // Its pods are not unschedulable, only not all created yet: the PodGroup says so, once.
    if (job.awaiting_pods) continue;
    for (TaskStatus s : {TaskStatus::kAllocated, TaskStatus::kPending, TaskStatus::kPipelined}) {
      for (const auto& [uid, task] : job.TasksWithStatus(s)) {
        TaskSchedulingReason why = job.TaskReason(*task);
        PodScheduledCondition cond{why.reason, why.message, why.nominated_node_name};
        if (task->scheduled_condition.has_value() && *task->scheduled_condition == cond) continue;
        sink->UpdatePodCondition(
            PodConditionUpdate{task->uid, task->namespace_name, task->name, cond});
        sink->RecordEvent(EventRecord{"Pod", task->namespace_name, task->name, "Warning",
                                      "FailedScheduling", why.message});
      }
    }
  }
  // After the phases are decided (WriteJobStatus), against the status saved at open.
  if (options_.report != nullptr) FillReport();
  if (sink == nullptr) return;
  // Queue status.allocated: the queue's own jobs, added up the parent chain.
  std::map<std::string, Resource> allocated;
  for (const auto& [id, job] : jobs()) {
    std::string q = job.queue;
    for (int depth = 0; !q.empty() && depth < 64; ++depth) {
      allocated[q] += job.allocated();
      const QueueInfo* queue = FindQueue(q);
      if (queue == nullptr || queue->parent == q) break;
      q = queue->parent;
    }
  }
  for (const auto& [name, queue] : queues()) {
    QueueStatusUpdate update{name, allocated[name]};
    // status.deserved and status.guarantee: only what the share plugin reported, only changes.
    if (auto it = queue_reports_.find(name); it != queue_reports_.end()) {
      const QueueShareReport& r = it->second;
      if (r.deserved.has_value() && !(*r.deserved == queue.status_deserved)) {
        update.deserved = r.deserved;
      }
      if (r.guarantee.has_value() && !(*r.guarantee == queue.status_guarantee)) {
        update.guarantee = r.guarantee;
      }
    }
    if (update.allocated == queue.status_allocated && !update.deserved.has_value() &&
        !update.guarantee.has_value()) {
      continue;
    }
    sink->UpdateQueueStatus(std::move(update));
  }
  for (auto& e : events_) sink->RecordEvent(std::move(e));
  events_.clear();
}

}  // namespace basalt::sched
