// Session, part 3: what a cycle reports for the metrics (cycle_report.h). Reads the session's
// final state; never changes it.
#include "scheduler/framework/cycle_report.h"

#include <algorithm>

#include "scheduler/framework/session.h"

namespace basalt::sched {

void Session::ReportQueue(const std::string& queue, QueueShareReport report) {
  queue_reports_[queue] = std::move(report);
}

void Session::ReportJobShare(const std::string& job_uid, double share) {
  if (options_.report == nullptr) return;
  const JobInfo* job = FindJob(job_uid);
  if (job == nullptr) return;
  options_.report->job_shares.push_back(
      CycleReport::JobShare{job->name, job->namespace_name, share});
}

void Session::FillReport() {
  CycleReport& r = *options_.report;
  r.total = std::chrono::steady_clock::now() - opened_at_;
  r.tasks_dispatched = dispatched_;
  r.task_latencies = std::move(task_latencies_);
  task_latencies_.clear();
  r.evictions = evictions_;
  r.preemption_attempts = preemption_attempts_;

  std::map<std::string, CycleReport::Queue> queues;
  for (const auto& [name, q] : this->queues()) {
    CycleReport::Queue& out = queues[name];
    out.name = name;
    out.weight = q.weight;
    out.capability = q.capability;
    if (auto it = queue_reports_.find(name); it != queue_reports_.end()) out.share = it->second;
    out.overused = Overused(q);
  }
  for (const auto& [id, job] : jobs()) {
    auto qit = queues.find(job.queue);
    if (qit != queues.end()) {
      qit->second.allocated += job.allocated();
      qit->second.request += job.allocated();
      for (const auto& [task_uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
        qit->second.request += t->resreq;
      }
    }
    const PodGroupCondition* unsched = job.podgroup_status.FindCondition(kConditionUnschedulable);
    const int pending = job.TaskCount(TaskStatus::kPending);
    if (unsched != nullptr && unsched->status == "True" && unsched->transition_id == uid() &&
        pending > 0) {
      r.unschedulable_jobs.push_back(
          CycleReport::Job{job.name, job.namespace_name, job.queue, pending});
    }
    const PodGroupPhase now_phase = job.podgroup_status.phase;
    auto saved = old_status_.find(id);
    const bool was_running =
        saved != old_status_.end() && (saved->second.phase == PodGroupPhase::kRunning ||
                                       saved->second.phase == PodGroupPhase::kCompleted);
    if (now_phase == PodGroupPhase::kRunning && !was_running && job.creation_time != Timestamp{}) {
      r.scheduled_jobs.push_back(CycleReport::ScheduledJob{
          job.name, job.namespace_name, job.queue,
          std::max(std::chrono::nanoseconds::zero(),
                   std::chrono::duration_cast<std::chrono::nanoseconds>(now() - job.creation_time)),
          job.creation_time, now()});
    }
  }
  r.queues.reserve(queues.size());
  for (auto& [name, q] : queues) r.queues.push_back(std::move(q));
}

}  // namespace basalt::sched
