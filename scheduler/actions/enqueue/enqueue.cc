#include "scheduler/actions/enqueue/enqueue.h"

#include <map>

#include "fmt/format.h"
#include "scheduler/actions/util.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class EnqueueAction final : public Action {
 public:
  std::string_view Name() const override { return kEnqueueActionName; }

  void Execute(Session& ssn) override {
    PriorityQueue<QueueInfo> queues(
        [&ssn](const QueueInfo& l, const QueueInfo& r) { return ssn.QueueOrder(l, r); });
    std::map<std::string, PriorityQueue<JobInfo>> jobs_by_queue;
    for (auto& [id, job] : ssn.jobs()) {
      if (!job.IsPending()) continue;
      QueueInfo* queue = ssn.FindQueue(job.queue);
      // A job that cannot be admitted because of its queue says so (its pods' PodScheduled
      // message and the PodGroup's Unschedulable condition), not "all nodes are unavailable".
      if (queue == nullptr) {
        job.job_fit_errors = fmt::format("queue {} does not exist", job.queue);
        continue;
      }
      if (queue->state != QueueState::kOpen) {
        job.job_fit_errors = fmt::format("queue {} is {}: it admits no new jobs", queue->name,
                                         QueueStateName(queue->state));
        continue;
      }
      // A PodGroup made for pods that exist already waits for them (JobInfo::
      // pods_precede_group): admitted with them, it is placed in the same cycle and written
      // once (Running), not Inqueue now and Running a cycle later. Volcano admits it empty.
      if (job.pods_precede_group && job.min_available > 0 && job.tasks().empty()) continue;
      if (!job.never_fits.empty()) {
        // Explained and left out: a gang that can never run takes no turn of its queue and
        // reserves nothing at admission (feasibility.h).
        job.job_fit_errors = job.never_fits;
        continue;
      }
      auto [it, inserted] = jobs_by_queue.try_emplace(
          queue->name, [&ssn](const JobInfo& l, const JobInfo& r) { return ssn.JobOrder(l, r); });
      if (inserted) queues.Push(queue);
      it->second.Push(&job);
    }
    while (!queues.Empty()) {
      QueueInfo* queue = queues.Pop();
      auto& jobs = jobs_by_queue.at(queue->name);
      if (jobs.Empty()) continue;
      JobInfo* job = jobs.Pop();
      if (!job->min_resources.has_value() || ssn.JobEnqueueable(*job)) {
        ssn.JobEnqueued(*job);
        job->podgroup_status.phase = PodGroupPhase::kInqueue;
        job->job_fit_errors.clear();
      }
      if (!jobs.Empty()) queues.Push(queue);
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewEnqueueAction() { return std::make_unique<EnqueueAction>(); }

}  // namespace basalt::sched
