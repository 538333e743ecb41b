#include "scheduler/actions/backfill/backfill.h"

#include <algorithm>
#include <vector>

#include "common/util/status.h"
#include "scheduler/actions/util.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class BackfillAction final : public Action {
 public:
  std::string_view Name() const override { return kBackfillActionName; }

  void Execute(Session& ssn) override {
    std::vector<JobInfo*> jobs;
    for (auto& [id, job] : ssn.jobs()) {
      if (job.IsPending() || !job.never_fits.empty() || ssn.FindQueue(job.queue) == nullptr) {
        continue;
      }
      if (ssn.JobValid(job).has_value()) continue;
      jobs.push_back(&job);
    }
    std::sort(jobs.begin(), jobs.end(), [&ssn](const JobInfo* l, const JobInfo* r) {
      const QueueInfo* lq = ssn.FindQueue(l->queue);
      const QueueInfo* rq = ssn.FindQueue(r->queue);
      if (lq != rq) {
        if (ssn.QueueOrder(*lq, *rq)) return true;
        if (ssn.QueueOrder(*rq, *lq)) return false;
      }
      return ssn.JobOrder(*l, *r);
    });
    for (JobInfo* job : jobs) {
      std::vector<TaskInfo*> tasks;
      for (const auto& [uid, t] : job->TasksWithStatus(TaskStatus::kPending)) {
        if (t->BestEffort()) tasks.push_back(t);
      }
      std::sort(tasks.begin(), tasks.end(),
                [&ssn](const TaskInfo* l, const TaskInfo* r) { return ssn.TaskOrder(*l, *r); });
      for (TaskInfo* task : tasks) {
        FitErrors errors;
        std::vector<NodeInfo*> feasible =
            PredicateNodes(ssn, *task, /*check_resources=*/false, &errors);
        if (feasible.empty()) {
          job->nodes_fit_errors[task->uid] = std::move(errors);
          continue;
        }
        NodeInfo* node = SelectBestNode(ssn, *task, feasible);
        if (absl::Status s = ssn.Allocate(task, node); !s.ok()) {
          FitErrors fe;
          fe.SetNodeError(node->name(), {std::string(MessageOf(s))});
          job->nodes_fit_errors[task->uid] = std::move(fe);
          continue;
        }
        job->nodes_fit_errors.erase(task->uid);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewBackfillAction() { return std::make_unique<BackfillAction>(); }

}  // namespace basalt::sched
