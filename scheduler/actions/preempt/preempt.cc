#include "scheduler/actions/preempt/preempt.h"

#include <algorithm>
#include <map>
#include <vector>

#include "scheduler/actions/util.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"

namespace basalt::sched {
namespace {

class PreemptAction final : public Action {
 public:
  std::string_view Name() const override { return kPreemptActionName; }

  void Execute(Session& ssn) override {
    auto [queues, starving] = CollectStarvingJobs(ssn);
    while (!queues.Empty()) {
      QueueInfo* queue = queues.Pop();
      auto& jobs = starving.at(queue->name);
      while (!jobs.Empty()) {
        JobInfo* job = jobs.Pop();
        Statement stmt(&ssn);
        std::vector<TaskInfo*> tasks;
        for (const auto& [uid, t] : job->TasksWithStatus(TaskStatus::kPending)) {
          // No eviction can make room for what can never fit (feasibility.h).
          if (job->never_fit_tasks.count(uid) == 0) tasks.push_back(t);
        }
        std::sort(tasks.begin(), tasks.end(),
                  [&ssn](const TaskInfo* l, const TaskInfo* r) { return ssn.TaskOrder(*l, *r); });
        for (TaskInfo* task : tasks) {
          if (!ssn.JobStarving(*job)) break;
          PreemptFor(ssn, *queue, task, stmt);
        }
        if (ssn.JobPipelined(*job)) {
          stmt.Commit();
        } else {
          stmt.Discard();
        }
      }
    }
  }

 private:
  static bool MayEvict(const Session& ssn, const QueueInfo& queue, const TaskInfo& preemptor,
                       const TaskInfo& victim) {
    if (victim.status != TaskStatus::kRunning && victim.status != TaskStatus::kBound) return false;
    if (!victim.preemptable || victim.job_id.empty() || victim.job_id == preemptor.job_id) {
      return false;
    }
    if (preemptor.BestEffort() && !victim.BestEffort()) return false;
    const JobInfo* victim_job = ssn.FindJob(victim.job_id);
    return victim_job != nullptr && victim_job->queue == queue.name;
  }

  static void PreemptFor(Session& ssn, const QueueInfo& queue, TaskInfo* task, Statement& stmt) {
    // Candidate nodes: those where only resources (or other resolvable reasons) stand in the
    // way, best score first.
    std::vector<NodeInfo*> candidates;
    for (NodeInfo* node : ssn.node_list()) {
      Outcome o = ssn.Predicate(*task, *node);
      if (o.code() == Code::kUnschedulableAndUnresolvable || o.code() == Code::kWait ||
          o.code() == Code::kSkip) {
        continue;
      }
      candidates.push_back(node);
    }
    std::vector<std::pair<double, NodeInfo*>> scored;
    for (NodeInfo* n : candidates) scored.emplace_back(ssn.NodeOrder(*task, *n), n);
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });

    for (const auto& entry : scored) {
      // Not a structured binding: the lambda below captures it (Clang < 16 cannot).
      NodeInfo* const node = entry.second;
      std::vector<const TaskInfo*> preemptees;
      for (const auto& [uid, t] : node->tasks()) {
        if (MayEvict(ssn, queue, *task, *t)) preemptees.push_back(t);
      }
      std::vector<const TaskInfo*> victims = ssn.Preemptable(*task, preemptees);
      Resource freed;
      for (const TaskInfo* v : victims) freed += v->resreq;
      if (!task->init_resreq.LessEqual(node->FutureIdle() + freed)) continue;
      // Lowest-priority jobs and tasks first.
      std::sort(victims.begin(), victims.end(), [&ssn](const TaskInfo* l, const TaskInfo* r) {
        const JobInfo& lj = *ssn.FindJob(l->job_id);
        const JobInfo& rj = *ssn.FindJob(r->job_id);
        if (lj.uid != rj.uid) return ssn.JobOrder(rj, lj);
        return ssn.TaskOrder(*r, *l);
      });
      Statement node_stmt(&ssn);
      auto fits = [&] {
        return task->init_resreq.LessEqual(node->FutureIdle()) && ssn.Allocatable(queue, *task);
      };
      for (const TaskInfo* v : victims) {
        if (fits()) break;
        (void)node_stmt.Evict(ssn.FindJob(v->job_id)->FindTask(v->uid), "preempt");
      }
      if (fits() && ssn.Predicate(*task, *node).code() != Code::kUnschedulableAndUnresolvable &&
          node_stmt.Pipeline(task, node).ok()) {
        stmt.Merge(node_stmt);
        return;
      }
      node_stmt.Discard();
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewPreemptAction() { return std::make_unique<PreemptAction>(); }

}  // namespace basalt::sched
