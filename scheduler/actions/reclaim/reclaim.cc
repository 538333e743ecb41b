#include "scheduler/actions/reclaim/reclaim.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "scheduler/actions/util.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"

namespace basalt::sched {
namespace {

class ReclaimAction final : public Action {
 public:
  std::string_view Name() const override { return kReclaimActionName; }

  void Execute(Session& ssn) override {
    auto [queues, starving] = CollectStarvingJobs(ssn);
    while (!queues.Empty()) {
      QueueInfo* queue = queues.Pop();
      if (ssn.Overused(*queue)) continue;
      auto& jobs = starving.at(queue->name);
      if (jobs.Empty()) continue;
      JobInfo* job = jobs.Pop();
      std::vector<TaskInfo*> tasks;
      for (const auto& [uid, t] : job->TasksWithStatus(TaskStatus::kPending)) {
        // No eviction can make room for what can never fit (feasibility.h).
        if (job->never_fit_tasks.count(uid) == 0) tasks.push_back(t);
      }
      std::sort(tasks.begin(), tasks.end(),
                [&ssn](const TaskInfo* l, const TaskInfo* r) { return ssn.TaskOrder(*l, *r); });
      // Every node, or each HyperNode a hard networkTopology allows in turn.
      const std::optional<JobDomains> hard = HardEvictionDomains(ssn, *job);
      std::vector<const std::vector<NodeInfo*>*> scopes;
      if (!hard.has_value()) {
        scopes.push_back(&ssn.node_list());
      } else {
        for (const NodeDomain& d : hard->domains) scopes.push_back(&d.nodes);
      }
      bool reclaimed = false;
      for (const std::vector<NodeInfo*>* scope : scopes) {
        Statement stmt(&ssn);
        for (TaskInfo* task : tasks) {
          if (task->preempt_never || !ssn.Preemptive(*queue, *task)) continue;
          ReclaimFor(ssn, *queue, *job, task, *scope, stmt);
        }
        if (ssn.JobPipelined(*job)) {
          stmt.Commit();
          reclaimed = true;
          break;
        }
        stmt.Discard();
      }
      if (!reclaimed && hard.has_value() && !tasks.empty()) {
        NoteHardTopologyFailure(kReclaimActionName, *job, *hard);
      }
      if (!jobs.Empty()) queues.Push(queue);
    }
  }

 private:
  // Tries the nodes of `scope` in order; on the first node where evicting allowed victims makes
  // room, evicts them into `stmt` and pipelines `task` there.
  static void ReclaimFor(Session& ssn, const QueueInfo& queue, const JobInfo& job, TaskInfo* task,
                         const std::vector<NodeInfo*>& scope, Statement& stmt) {
    EvictionCause cause;
    cause.reason = std::string(kReclaimActionName);
    cause.preemptor_job = job.uid;
    cause.preemptor_queue = job.queue;
    cause.preemptor_priority = job.priority;
    const bool quota_bound = !ssn.Allocatable(queue, *task);
    for (NodeInfo* node : scope) {
      Outcome o = ssn.Predicate(*task, *node);
      if (o.code() == Code::kUnschedulableAndUnresolvable || o.code() == Code::kWait ||
          o.code() == Code::kSkip) {
        continue;
      }
      std::vector<const TaskInfo*> reclaimees;
      for (const auto& [uid, t] : node->tasks()) {
        if (t->status != TaskStatus::kRunning || !t->preemptable || t->job_id.empty()) continue;
        // Never critical pods, whatever the configuration (conformance's rule).
        if (t->namespace_name == "kube-system" ||
            t->priority_class_name == "system-cluster-critical" ||
            t->priority_class_name == "system-node-critical") {
          continue;
        }
        const JobInfo* victim_job = ssn.FindJob(t->job_id);
        if (victim_job == nullptr || victim_job->not_preemptable || victim_job->queue == queue.name)
          continue;
        const QueueInfo* victim_queue = ssn.FindQueue(victim_job->queue);
        if (victim_queue == nullptr || !victim_queue->reclaimable) continue;
        reclaimees.push_back(t);
      }
      if (reclaimees.empty()) continue;
      std::vector<const TaskInfo*> victims = ssn.Reclaimable(*task, reclaimees);
      Resource reclaimable;
      for (const TaskInfo* v : victims) reclaimable += v->resreq;
      if (!task->init_resreq.LessEqual(node->FutureIdle() + reclaimable)) continue;
      // Lowest-priority victims go first; evictions for a node that does not work out are undone.
      std::sort(victims.begin(), victims.end(),
                [&ssn](const TaskInfo* l, const TaskInfo* r) { return ssn.TaskOrder(*r, *l); });
      Statement node_stmt(&ssn);
      // When the queue's quota rather than the node holds the task back (capacity: an ancestor
      // at its capability while siblings borrow), room on the node is not enough: victims
      // worth the task's request must go too, or the task is pipelined onto idle space its
      // queue may not use and nothing is ever given back.
      Resource evicted;
      auto room = [&] {
        return task->init_resreq.LessEqual(node->FutureIdle()) &&
               (!quota_bound || task->resreq.LessEqualOn(evicted, task->resreq));
      };
      for (const TaskInfo* v : victims) {
        if (room()) break;
        TaskInfo* victim = ssn.FindJob(v->job_id)->FindTask(v->uid);
        if (node_stmt.Evict(victim, cause).ok()) evicted += v->resreq;
      }
      if (room() && node_stmt.Pipeline(task, node).ok()) {
        stmt.Merge(node_stmt);
        return;
      }
      node_stmt.Discard();
    }
  }
};

}  // namespace

std::unique_ptr<Action> NewReclaimAction() { return std::make_unique<ReclaimAction>(); }

}  // namespace basalt::sched
