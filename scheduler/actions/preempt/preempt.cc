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

const std::set<std::string> kNoJobs;

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
  size_t rehit = 0;  // victims of jobs that already lost pods to this preemptor job
  double score = 0;

  // Fewest victims, then the fewest from jobs already hit (so that those earlier victims can be
  // reprieved once the job is placed), then the least important victims, then the best node
  // score.
  bool BetterThan(const NodePlan& o) const {
    if (victims.size() != o.victims.size()) return victims.size() < o.victims.size();
    if (rehit != o.rehit) return rehit < o.rehit;
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
        PreemptForJob(ssn, *queue, *job);
      }
      // Within a job: a pending task evicts lower-priority running tasks of its own job.
      for (JobInfo* job : seen) {
        const std::optional<JobDomains> hard = HardEvictionDomains(ssn, *job);
        for (TaskInfo* task : PreemptorTasks(ssn, *job)) {
          if (!ssn.JobStarving(*job)) break;
          bool placed = false;
          for (const std::vector<NodeInfo*>* nodes : Scopes(ssn, hard)) {
            Statement stmt(&ssn);
            if (PreemptFor(ssn, *queue, *job, task, /*same_job=*/true, kNoJobs, *nodes, stmt,
                           nullptr)) {
              stmt.Commit();
              placed = true;
              break;
            }
            stmt.Discard();
          }
          if (!placed) break;
        }
      }
    }
  }

 private:
  static EvictionCause CauseFor(const JobInfo& job) {
    EvictionCause cause;
    cause.reason = std::string(kPreemptActionName);
    cause.preemptor_job = job.uid;
    cause.preemptor_queue = job.queue;
    cause.preemptor_priority = job.priority;
    return cause;
  }

  // The node sets a job's tasks may be placed in, each tried on its own: every node, or the
  // HyperNodes its hard networkTopology allows (HardEvictionDomains).
  static std::vector<const std::vector<NodeInfo*>*> Scopes(const Session& ssn,
                                                           const std::optional<JobDomains>& hard) {
    std::vector<const std::vector<NodeInfo*>*> scopes;
    if (!hard.has_value()) {
      scopes.push_back(&ssn.node_list());
      return scopes;
    }
    for (const NodeDomain& d : hard->domains) scopes.push_back(&d.nodes);
    return scopes;
  }

  // Between jobs, for one starving job: with a hard networkTopology, inside each HyperNode it
  // allows in turn (victims and placement both), the first that works is kept; when none does,
  // nothing is evicted and the job's fit error says why (the tier, the best HyperNode).
  static void PreemptForJob(Session& ssn, const QueueInfo& queue, JobInfo& job) {
    const std::optional<JobDomains> hard = HardEvictionDomains(ssn, job);
    for (const std::vector<NodeInfo*>* nodes : Scopes(ssn, hard)) {
      if (PreemptInScope(ssn, queue, job, *nodes)) return;
    }
    if (hard.has_value() && !PreemptorTasks(ssn, job).empty()) {
      NoteHardTopologyFailure(kPreemptActionName, job, *hard);
    }
  }

  // For one starving job, placing its tasks and taking victims on `scope` only. The rule: a victim
  // is counted as freed from the moment it is evicted (Releasing: FutureIdle includes it, in this
  // cycle and in every later one until its pod is gone), so room already freed for the job is used
  // before anything else is evicted, and the job costs only the evictions its gang needs. First a
  // greedy pass places the pending tasks one by one on the node needing the fewest victims (whole
  // victim jobs may span nodes: their other pods free room for the later tasks); then, the gang
  // being placed, every victim (a spare pod, or a whole job that goes as one) the placement can do
  // without is reprieved, the largest and most important first, each checked by placing the whole
  // gang again. All of it is one statement, committed only if the job is then pipelined. Returns
  // whether it was.
  static bool PreemptInScope(Session& ssn, const QueueInfo& queue, JobInfo& job,
                             const std::vector<NodeInfo*>& scope) {
    std::vector<const TaskInfo*> victims;
    std::set<std::string> nodes;
    {
      Statement greedy(&ssn);
      Greedy(ssn, queue, job, scope, greedy, &victims, &nodes);
      const bool placed = ssn.JobPipelined(job);
      greedy.Discard();
      if (!placed) return false;  // nothing is evicted for a gang that would still not run
    }
    if (Place(ssn, queue, job, scope, victims, nullptr, nullptr)) {
      for (const std::vector<const TaskInfo*>& unit : ReprieveUnits(ssn, victims)) {
        std::vector<const TaskInfo*> without;
        for (const TaskInfo* v : victims) {
          if (std::find(unit.begin(), unit.end(), v) == unit.end()) without.push_back(v);
        }
        if (Place(ssn, queue, job, scope, without, nullptr, nullptr)) {
          victims = std::move(without);
        }
      }
      nodes.clear();
      (void)Place(ssn, queue, job, scope, victims, nullptr, &nodes);
      if (!WholeJobsUsed(ssn, victims, nodes)) return false;
      Statement stmt(&ssn);
      if (Place(ssn, queue, job, scope, victims, &stmt, nullptr)) {
        stmt.Commit();
        return true;
      }
      stmt.Discard();
      return false;
    }
    // The re-placement (best node per task, victims gone first) can differ from the greedy one;
    // keep the greedy result as it is.
    if (!WholeJobsUsed(ssn, victims, nodes)) return false;
    Statement stmt(&ssn);
    Greedy(ssn, queue, job, scope, stmt, nullptr, nullptr);
    if (ssn.JobPipelined(job)) {
      stmt.Commit();
      return true;
    }
    stmt.Discard();
    return false;
  }

  // A victim job taken whole (more victims than it can lose and keep minAvailable) must free
  // room the preemptor uses: a preemptor task goes to every node it had pods on. Else the
  // eviction would break a gang for room nobody takes.
  static bool WholeJobsUsed(const Session& ssn, const std::vector<const TaskInfo*>& victims,
                            const std::set<std::string>& nodes) {
    std::map<std::string, int> count;
    for (const TaskInfo* v : victims) ++count[v->job_id];
    for (const TaskInfo* v : victims) {
      const JobInfo* vj = ssn.FindJob(v->job_id);
      const bool whole = count[v->job_id] > vj->ReadyTaskNum() - vj->min_available;
      if (whole && nodes.count(v->node_name) == 0) return false;
    }
    return true;
  }

  // The greedy pass: each pending task, while the job starves, on the node of `scope` that needs
  // the fewest victims. Appends the victims to `victims` if not null.
  static void Greedy(Session& ssn, const QueueInfo& queue, JobInfo& job,
                     const std::vector<NodeInfo*>& scope, Statement& stmt,
                     std::vector<const TaskInfo*>* victims, std::set<std::string>* nodes) {
    std::set<std::string> hit_jobs;
    for (TaskInfo* task : PreemptorTasks(ssn, job)) {
      if (!ssn.JobStarving(job)) break;
      std::vector<const TaskInfo*> evicted;
      if (PreemptFor(ssn, queue, job, task, /*same_job=*/false, hit_jobs, scope, stmt, &evicted)) {
        for (const TaskInfo* v : evicted) hit_jobs.insert(v->job_id);
        if (victims != nullptr) victims->insert(victims->end(), evicted.begin(), evicted.end());
        if (nodes != nullptr) nodes->insert(task->node_name);
      }
    }
  }

  // What may be reprieved as one: per victim job, its victims one by one if they are within
  // what it can lose and keep minAvailable ready pods; else all of them as one (the whole job),
  // and then, as a second unit, those above its spare count (keeping the job whole-or-spare).
  // Larger units first, then the most important.
  static std::vector<std::vector<const TaskInfo*>> ReprieveUnits(
      const Session& ssn, const std::vector<const TaskInfo*>& victims) {
    std::map<std::string, std::vector<const TaskInfo*>> by_job;
    for (const TaskInfo* v : victims) by_job[v->job_id].push_back(v);
    std::vector<std::vector<const TaskInfo*>> units;
    for (auto& [id, pods] : by_job) {
      const JobInfo* vj = ssn.FindJob(id);
      const int spare = std::max(0, vj->ReadyTaskNum() - vj->min_available);
      std::sort(pods.begin(), pods.end(),
                [&ssn](const TaskInfo* l, const TaskInfo* r) { return VictimBefore(ssn, l, r); });
      if (static_cast<int>(pods.size()) <= spare) {
        for (const TaskInfo* p : pods) units.push_back({p});
        continue;
      }
      units.push_back(pods);
      if (spare > 0) units.emplace_back(pods.begin() + spare, pods.end());
    }
    auto most_important = [&ssn](const std::vector<const TaskInfo*>& u) {
      return *std::max_element(u.begin(), u.end(), [&ssn](const TaskInfo* l, const TaskInfo* r) {
        return VictimBefore(ssn, l, r);
      });
    };
    std::stable_sort(units.begin(), units.end(), [&](const auto& l, const auto& r) {
      if (l.size() != r.size()) return l.size() > r.size();
      return VictimBefore(ssn, most_important(r), most_important(l));
    });
    return units;
  }

  // Whether `task` can be pipelined onto `node` as it is now (after the evictions so far).
  static bool CanPipeline(Session& ssn, const QueueInfo& queue, const TaskInfo& task,
                          const NodeInfo& node) {
    if (!task.init_resreq.LessEqual(node.FutureIdle()) || !ssn.Allocatable(queue, task)) {
      return false;
    }
    const Code code = ssn.Predicate(task, node).code();
    return code != Code::kUnschedulableAndUnresolvable && code != Code::kWait &&
           code != Code::kSkip;
  }

  // Evicts `victims`, then pipelines the job's pending tasks (while it starves) each onto the
  // best node of `scope` where it fits. Returns whether the job is then pipelined; the operations
  // go into `out` if so and `out` is not null, else they are undone. The nodes used go into
  // `nodes`.
  static bool Place(Session& ssn, const QueueInfo& queue, JobInfo& job,
                    const std::vector<NodeInfo*>& scope,
                    const std::vector<const TaskInfo*>& victims, Statement* out,
                    std::set<std::string>* nodes) {
    const EvictionCause cause = CauseFor(job);
    Statement s(&ssn);
    for (const TaskInfo* v : victims) {
      if (!s.Evict(ssn.FindJob(v->job_id)->FindTask(v->uid), cause).ok()) {
        s.Discard();
        return false;
      }
    }
    for (TaskInfo* task : PreemptorTasks(ssn, job)) {
      if (!ssn.JobStarving(job)) break;
      std::vector<NodeInfo*> fit;
      for (NodeInfo* node : scope) {
        if (CanPipeline(ssn, queue, *task, *node)) fit.push_back(node);
      }
      NodeInfo* best = SelectBestNode(ssn, *task, fit);
      if (best != nullptr && s.Pipeline(task, best).ok() && nodes != nullptr) {
        nodes->insert(best->name());
      }
    }
    const bool placed = ssn.JobPipelined(job);
    if (placed && out != nullptr) {
      out->Merge(s);
    } else {
      s.Discard();
    }
    return placed;
  }

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

  // All ready pods of `vj` if every one of them may be evicted for `task` (Running or Bound,
  // allowed by the rules and the plugins), on whatever node; else nothing.
  static std::vector<const TaskInfo*> WholeJob(Session& ssn, const QueueInfo& queue,
                                               const TaskInfo& task, const JobInfo& vj) {
    std::vector<const TaskInfo*> pods;
    for (const auto& [uid, t] : vj.tasks()) {
      if (!IsAllocatedStatus(t.status) && t.status != TaskStatus::kSucceeded) continue;
      if (!MayEvict(ssn, queue, task, t, /*same_job=*/false)) return {};
      pods.push_back(&t);
    }
    if (pods.empty() || static_cast<int>(pods.size()) != vj.ReadyTaskNum()) return {};
    if (ssn.Preemptable(task, pods).size() != pods.size()) return {};
    std::sort(pods.begin(), pods.end(),
              [&ssn](const TaskInfo* l, const TaskInfo* r) { return VictimBefore(ssn, l, r); });
    return pods;
  }

  // What evicting on `node` takes: nothing if the task fits in the node's future idle (room
  // already freed, e.g. by victims still terminating); else the allowed victims in order, until
  // the task fits; then those it can do without, most important first. Gang safety: a victim
  // job keeps at least minAvailable ready pods (counted on the session, so earlier evictions of
  // this cycle count), unless the whole job goes: when that is still not enough, a job with
  // allowed victims here all of whose ready pods (on any node) may be evicted is taken entirely,
  // lowest priority first; its pods elsewhere count as victims of this plan and free room for
  // the preemptor's later tasks; a job with pods outside `scope` (the HyperNode a hard
  // networkTopology keeps the preemptor in) is not taken whole. `hit_jobs`: jobs that already
  // lost pods to this preemptor job.
  static std::optional<NodePlan> PlanNode(Session& ssn, const QueueInfo& queue,
                                          const TaskInfo& task, NodeInfo* node, bool same_job,
                                          const std::set<std::string>& hit_jobs,
                                          const std::vector<NodeInfo*>& scope) {
    auto fits = [&](const Resource& freed) {
      return task.init_resreq.LessEqual(node->FutureIdle() + freed);
    };
    NodePlan plan;
    plan.node = node;
    plan.score = ssn.NodeOrder(task, *node);
    if (fits(Resource())) return plan;
    std::vector<const TaskInfo*> preemptees;
    for (const auto& [uid, t] : node->tasks()) {
      if (MayEvict(ssn, queue, task, *t, same_job)) preemptees.push_back(t);
    }
    if (preemptees.empty()) return std::nullopt;
    std::vector<const TaskInfo*> allowed = ssn.Preemptable(task, preemptees);
    std::sort(allowed.begin(), allowed.end(),
              [&ssn](const TaskInfo* l, const TaskInfo* r) { return VictimBefore(ssn, l, r); });
    std::map<std::string, int> spare;  // victim job -> pods it can still lose
    std::set<std::string> chosen;
    Resource freed;
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
      // Whole jobs, those not hit yet first (their earlier victims stay reprievable).
      std::vector<std::string> job_order;
      for (const TaskInfo* v : allowed) {
        if (std::find(job_order.begin(), job_order.end(), v->job_id) == job_order.end()) {
          job_order.push_back(v->job_id);
        }
      }
      std::stable_partition(job_order.begin(), job_order.end(),
                            [&](const std::string& id) { return hit_jobs.count(id) == 0; });
      std::set<std::string> in_scope;
      if (scope.size() != ssn.node_list().size()) {
        for (const NodeInfo* n : scope) in_scope.insert(n->name());
      }
      for (const std::string& id : job_order) {
        if (fits(freed)) break;
        std::vector<const TaskInfo*> whole = WholeJob(ssn, queue, task, *ssn.FindJob(id));
        if (!in_scope.empty() && std::any_of(whole.begin(), whole.end(), [&](const TaskInfo* v) {
              return in_scope.count(v->node_name) == 0;
            })) {
          continue;
        }
        for (const TaskInfo* v : whole) {
          if (!chosen.insert(v->uid).second) continue;
          if (v->node_name == node->name()) freed += v->resreq;
          plan.victims.push_back(v);
        }
      }
    }
    if (!fits(freed)) return std::nullopt;
    for (const TaskInfo* v : plan.victims) {
      const JobInfo* vj = ssn.FindJob(v->job_id);
      plan.highest_victim_priority =
          std::max(plan.highest_victim_priority, same_job ? v->priority : vj->priority);
      if (hit_jobs.count(v->job_id) != 0) ++plan.rehit;
    }
    return plan;
  }

  // Finds the node of `scope` where the fewest evictions make room for `task`, evicts them into
  // `stmt` and pipelines the task there. Returns whether it did; the victims go into `evicted`
  // if not null.
  static bool PreemptFor(Session& ssn, const QueueInfo& queue, const JobInfo& job, TaskInfo* task,
                         bool same_job, const std::set<std::string>& hit_jobs,
                         const std::vector<NodeInfo*>& scope, Statement& stmt,
                         std::vector<const TaskInfo*>* evicted) {
    ssn.NotePreemptionAttempt();
    std::vector<NodePlan> plans;
    for (NodeInfo* node : scope) {
      Outcome o = ssn.Predicate(*task, *node);
      // Only resources (or other reasons evictions resolve) may stand in the way.
      if (o.code() == Code::kUnschedulableAndUnresolvable || o.code() == Code::kWait ||
          o.code() == Code::kSkip) {
        continue;
      }
      if (auto plan = PlanNode(ssn, queue, *task, node, same_job, hit_jobs, scope);
          plan.has_value()) {
        plans.push_back(*std::move(plan));
      }
    }
    std::sort(plans.begin(), plans.end(),
              [](const NodePlan& l, const NodePlan& r) { return l.BetterThan(r); });
    const EvictionCause cause = CauseFor(job);
    for (const NodePlan& plan : plans) {
      Statement node_stmt(&ssn);
      for (const TaskInfo* v : plan.victims) {
        (void)node_stmt.Evict(ssn.FindJob(v->job_id)->FindTask(v->uid), cause);
      }
      if (CanPipeline(ssn, queue, *task, *plan.node) && node_stmt.Pipeline(task, plan.node).ok()) {
        stmt.Merge(node_stmt);
        if (evicted != nullptr)
          evicted->insert(evicted->end(), plan.victims.begin(), plan.victims.end());
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
