#include "scheduler/actions/preempt/preempt.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/actions/util.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"

namespace basalt::sched {
namespace {

// Victims go in this order: lower job priority, then lower task priority, then the youngest
// pod (the least work lost), then uid for a stable result.
bool VictimBefore(const Session& ssn, const TaskInfo* l, const TaskInfo* r) {
  const JobInfo* lj = ssn.FindJob(l->job_id);
  const JobInfo* rj = ssn.FindJob(r->job_id);
  const int32_t lp = lj != nullptr ? lj->priority : 0;
  const int32_t rp = rj != nullptr ? rj->priority : 0;
  if (lp != rp) return lp < rp;
  if (l->priority != r->priority) return l->priority < r->priority;
  if (l->creation_time != r->creation_time) return l->creation_time > r->creation_time;
  return l->uid < r->uid;
}

// One node's way of making room for a task: which victims, and how it ranks.
struct NodePlan {
  NodeInfo* node = nullptr;
  std::vector<const TaskInfo*> victims;  // in eviction order
  int32_t highest_victim_priority = 0;   // job priority of the most important victim
  double score = 0;

  // Fewest victims, then the least important victims, then the best node score.
  bool BetterThan(const NodePlan& o) const {
    if (victims.size() != o.victims.size()) return victims.size() < o.victims.size();
    if (highest_victim_priority != o.highest_victim_priority) {
      return highest_victim_priority < o.highest_victim_priority;
    }
    if (score != o.score) return score > o.score;
    return node->name() < o.node->name();
  }
};

class PreemptAction final : public Action {
 public:
  std::string_view Name() const override { return kPreemptActionName; }

  void Execute(Session& ssn) override {
    auto [queues, starving] = CollectStarvingJobs(ssn);
    while (!queues.Empty()) {
      QueueInfo* queue = queues.Pop();
      auto& jobs = starving.at(queue->name);
      std::vector<JobInfo*> seen;
      // Between jobs: a starving job evicts lower-priority work of other jobs of its queue.
      while (!jobs.Empty()) {
        JobInfo* job = jobs.Pop();
        seen.push_back(job);
        Statement stmt(&ssn);
        for (TaskInfo* task : PreemptorTasks(ssn, *job)) {
          if (!ssn.JobStarving(*job)) break;
          (void)PreemptFor(ssn, *queue, *job, task, /*same_job=*/false, stmt);
        }
        // The whole gang fits once the victims are gone, or nothing is evicted.
        if (ssn.JobPipelined(*job)) {
          stmt.Commit();
        } else {
          stmt.Discard();
        }
      }
      // Within a job: a pending task evicts lower-priority running tasks of its own job.
      for (JobInfo* job : seen) {
        for (TaskInfo* task : PreemptorTasks(ssn, *job)) {
          if (!ssn.JobStarving(*job)) break;
          Statement stmt(&ssn);
          if (PreemptFor(ssn, *queue, *job, task, /*same_job=*/true, stmt)) {
            stmt.Commit();
          } else {
            stmt.Discard();
            break;
          }
        }
      }
    }
  }

 private:
  // Pending tasks that may preempt, in task order: not known never to fit, and without
  // preemptionPolicy: Never.
  static std::vector<TaskInfo*> PreemptorTasks(const Session& ssn, JobInfo& job) {
    std::vector<TaskInfo*> tasks;
    for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
      if (t->preempt_never) continue;
      if (job.never_fit_tasks.count(uid) != 0) continue;  // no eviction makes room
      tasks.push_back(t);
    }
    std::sort(tasks.begin(), tasks.end(),
              [&ssn](const TaskInfo* l, const TaskInfo* r) { return ssn.TaskOrder(*l, *r); });
    return tasks;
  }

  // The rules no configuration relaxes: a Running or Bound pod of the same queue, preemptable
  // (pod and PodGroup), never in kube-system nor of a system-*-critical class; a BestEffort
  // preemptor only evicts BestEffort pods; `same_job` picks the preemptor's own job or only
  // other jobs.
  static bool MayEvict(const Session& ssn, const QueueInfo& queue, const TaskInfo& preemptor,
                       const TaskInfo& victim, bool same_job) {
    if (victim.status != TaskStatus::kRunning && victim.status != TaskStatus::kBound) return false;
    if (!victim.preemptable || victim.job_id.empty()) return false;
    if ((victim.job_id == preemptor.job_id) != same_job) return false;
    if (victim.namespace_name == "kube-system" ||
        victim.priority_class_name == "system-cluster-critical" ||
        victim.priority_class_name == "system-node-critical") {
      return false;
    }
    if (preemptor.BestEffort() && !victim.BestEffort()) return false;
    const JobInfo* victim_job = ssn.FindJob(victim.job_id);
    return victim_job != nullptr && !victim_job->not_preemptable && victim_job->queue == queue.name;
  }

  // What evicting on `node` takes: the allowed victims in order, until the task fits; then
  // those it can do without, most important first. Gang safety: a victim job keeps at least
  // minAvailable ready pods (counted on the session, so earlier evictions of this cycle count),
  // unless the whole job goes: when that is still not enough, a job all of whose ready pods are
  // allowed victims on this node may be taken entirely (lowest priority first).
  static std::optional<NodePlan> PlanNode(Session& ssn, const QueueInfo& queue,
                                          const TaskInfo& task, NodeInfo* node, bool same_job) {
    std::vector<const TaskInfo*> preemptees;
    for (const auto& [uid, t] : node->tasks()) {
      if (MayEvict(ssn, queue, task, *t, same_job)) preemptees.push_back(t);
    }
    if (preemptees.empty()) return std::nullopt;
    std::vector<const TaskInfo*> allowed = ssn.Preemptable(task, preemptees);
    std::sort(allowed.begin(), allowed.end(),
              [&ssn](const TaskInfo* l, const TaskInfo* r) { return VictimBefore(ssn, l, r); });
    auto fits = [&](const Resource& freed) {
      return task.init_resreq.LessEqual(node->FutureIdle() + freed);
    };
    std::map<std::string, int> spare;  // victim job -> pods it can still lose
    std::set<std::string> chosen;
    Resource freed;
    NodePlan plan;
    plan.node = node;
    for (const TaskInfo* v : allowed) {
      if (fits(freed)) break;
      if (!same_job) {
        const JobInfo* vj = ssn.FindJob(v->job_id);
        auto [it, inserted] = spare.try_emplace(v->job_id, 0);
        if (inserted) it->second = vj->ReadyTaskNum() - vj->min_available;
        if (it->second <= 0) continue;
        --it->second;
      }
      freed += v->resreq;
      plan.victims.push_back(v);
      chosen.insert(v->uid);
    }
    // Reprieve: the most important victims first, keep each one the task can do without.
    if (fits(freed)) {
      for (size_t i = plan.victims.size(); i-- > 0;) {
        const Resource without = freed.SubFloorZero(plan.victims[i]->resreq);
        if (fits(without)) {
          freed = without;
          chosen.erase(plan.victims[i]->uid);
          plan.victims.erase(plan.victims.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    } else if (!same_job) {
      // Whole jobs: all of a job's ready pods are here and allowed.
      std::map<std::string, std::vector<const TaskInfo*>> by_job;
      std::vector<std::string> job_order;
      for (const TaskInfo* v : allowed) {
        auto [it, inserted] = by_job.try_emplace(v->job_id);
        if (inserted) job_order.push_back(v->job_id);
        it->second.push_back(v);
      }
      for (const std::string& id : job_order) {
        if (fits(freed)) break;
        const JobInfo* vj = ssn.FindJob(id);
        const std::vector<const TaskInfo*>& here = by_job.at(id);
        if (static_cast<int>(here.size()) != vj->ReadyTaskNum()) continue;
        for (const TaskInfo* v : here) {
          if (!chosen.insert(v->uid).second) continue;
          freed += v->resreq;
          plan.victims.push_back(v);
        }
      }
    }
    if (!fits(freed)) return std::nullopt;
    for (const TaskInfo* v : plan.victims) {
      const JobInfo* vj = ssn.FindJob(v->job_id);
      plan.highest_victim_priority =
          std::max(plan.highest_victim_priority, same_job ? v->priority : vj->priority);
    }
    plan.score = ssn.NodeOrder(task, *node);
    return plan;
  }

  // Finds the node where the fewest evictions make room for `task`, evicts them into `stmt` and
  // pipelines the task there. Returns whether it did.
  static bool PreemptFor(Session& ssn, const QueueInfo& queue, const JobInfo& job, TaskInfo* task,
                         bool same_job, Statement& stmt) {
    ssn.NotePreemptionAttempt();
    std::vector<NodePlan> plans;
    for (NodeInfo* node : ssn.node_list()) {
      Outcome o = ssn.Predicate(*task, *node);
      // Only resources (or other reasons evictions resolve) may stand in the way.
      if (o.code() == Code::kUnschedulableAndUnresolvable || o.code() == Code::kWait ||
          o.code() == Code::kSkip) {
        continue;
      }
      if (auto plan = PlanNode(ssn, queue, *task, node, same_job); plan.has_value()) {
        plans.push_back(*std::move(plan));
      }
    }
    std::sort(plans.begin(), plans.end(),
              [](const NodePlan& l, const NodePlan& r) { return l.BetterThan(r); });
    EvictionCause cause;
    cause.reason = std::string(kPreemptActionName);
    cause.preemptor_job = job.uid;
    cause.preemptor_queue = job.queue;
    cause.preemptor_priority = job.priority;
    for (const NodePlan& plan : plans) {
      Statement node_stmt(&ssn);
      for (const TaskInfo* v : plan.victims) {
        (void)node_stmt.Evict(ssn.FindJob(v->job_id)->FindTask(v->uid), cause);
      }
      if (task->init_resreq.LessEqual(plan.node->FutureIdle()) && ssn.Allocatable(queue, *task) &&
          ssn.Predicate(*task, *plan.node).code() != Code::kUnschedulableAndUnresolvable &&
          node_stmt.Pipeline(task, plan.node).ok()) {
        stmt.Merge(node_stmt);
        return true;
      }
      node_stmt.Discard();
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Action> NewPreemptAction() { return std::make_unique<PreemptAction>(); }

}  // namespace basalt::sched
