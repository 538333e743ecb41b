#include "scheduler/actions/allocate/allocate.h"

#include <map>
#include <optional>
#include <set>

#include "common/util/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/actions/util.h"
#include "scheduler/framework/session.h"
#include "scheduler/framework/statement.h"

namespace basalt::sched {
namespace {

using TaskQueue = PriorityQueue<TaskInfo>;

// Whether a gang can still become ready after tasks of `failed_roles` / `failed_tasks` found no
// node (reference §3.2 step 6).
bool NeedContinueAllocating(const JobInfo& job, const std::set<std::string>& failed_roles,
                            const std::set<std::string>& failed_tasks) {
  if (job.min_available == static_cast<int32_t>(job.tasks().size())) return false;
  int possible = 0;
  for (const auto& [uid, t] : job.tasks()) {
    const bool valid = IsAllocatedStatus(t.status) || t.status == TaskStatus::kSucceeded ||
                       t.status == TaskStatus::kPipelined || t.status == TaskStatus::kPending;
    if (!valid) continue;
    if (t.status == TaskStatus::kPending &&
        (failed_tasks.count(uid) != 0 || (!t.role.empty() && failed_roles.count(t.role) != 0))) {
      continue;
    }
    ++possible;
  }
  if (possible < job.min_available) return false;
  for (const auto& role : failed_roles) {
    auto it = job.task_min_available.find(role);
    if (it == job.task_min_available.end()) continue;
    int placed = 0;
    for (const auto& [uid, t] : job.tasks()) {
      if (t.role == role && t.status != TaskStatus::kPending) ++placed;
    }
    if (placed < it->second) return false;
  }
  return true;
}

// The node named in the task's nominatedNodeName if the task passes the allocate predicate
// there now, else null.
NodeInfo* NominatedNode(Session& ssn, const TaskInfo& task) {
  if (!task.scheduled_condition.has_value() ||
      task.scheduled_condition->nominated_node_name.empty()) {
    return nullptr;
  }
  NodeInfo* node = ssn.FindNode(task.scheduled_condition->nominated_node_name);
  if (node == nullptr || !PredicateForAllocate(ssn, task, *node).ok()) return nullptr;
  return node;
}

class AllocateAction final : public Action {
 public:
  std::string_view Name() const override { return kAllocateActionName; }

  void Execute(Session& ssn) override {
    const bool has_enqueue = ssn.config().HasAction("enqueue");
    auto queue_before = [&ssn](const QueueInfo& l, const QueueInfo& r) {
      return ssn.QueueOrder(l, r);
    };
    auto job_before = [&ssn](const JobInfo& l, const JobInfo& r) { return ssn.JobOrder(l, r); };
    auto task_before = [&ssn](const TaskInfo& l, const TaskInfo& r) { return ssn.TaskOrder(l, r); };

    PriorityQueue<QueueInfo> queues(queue_before);
    std::map<std::string, PriorityQueue<JobInfo>> jobs_by_queue;
    std::map<std::string, TaskQueue> tasks_by_job;
    for (auto& [id, job] : ssn.jobs()) {
      if (!job.never_fits.empty()) {
        job.job_fit_errors = job.never_fits;  // explained and skipped (feasibility.h)
        continue;
      }
      if (job.IsPending()) {
        if (has_enqueue) continue;
        job.podgroup_status.phase = PodGroupPhase::kInqueue;
      }
      if (auto invalid = ssn.JobValid(job); invalid.has_value()) {
        job.job_fit_errors = invalid->message;
        job.awaiting_pods = invalid->awaiting_pods;
        continue;
      }
      QueueInfo* queue = ssn.FindQueue(job.queue);
      if (queue == nullptr) continue;
      TaskQueue tasks(task_before);
      for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
        if (t->BestEffort()) continue;
        if (auto never = job.never_fit_tasks.find(uid); never != job.never_fit_tasks.end()) {
          FitErrors fe;
          fe.SetError(never->second);
          job.nodes_fit_errors[uid] = std::move(fe);
          continue;
        }
        tasks.Push(t);
      }
      if (tasks.Empty()) continue;
      tasks_by_job.emplace(id, std::move(tasks));
      auto [it, inserted] = jobs_by_queue.try_emplace(queue->name, job_before);
      if (inserted) queues.Push(queue);
      it->second.Push(&job);
    }

    while (!queues.Empty()) {
      QueueInfo* queue = queues.Pop();
      if (ssn.Overused(*queue)) continue;
      auto& jobs = jobs_by_queue.at(queue->name);
      if (jobs.Empty()) continue;
      JobInfo* job = jobs.Pop();
      TaskQueue& tasks = tasks_by_job.at(job->uid);
      if (!job->sub_group_policies.empty()) {
        AllocateSubGroups(ssn, *queue, *job, tasks);
        queues.Push(queue);
        continue;
      }
      if (std::optional<JobDomains> domains = ssn.JobDomainsFor(*job); domains.has_value()) {
        if (AllocateInDomains(ssn, *queue, *job, tasks, *domains) && !tasks.Empty()) {
          jobs.Push(job);
        }
        queues.Push(queue);
        continue;
      }
      // Placements of a job that is only pipelined stay held for the rest of the session.
      auto stmt = std::make_unique<Statement>(&ssn);
      const Result result = AllocateTasks(ssn, *queue, *job, tasks, *stmt, nullptr);
      if (result == Result::kReady) {
        stmt->Commit();
        if (!tasks.Empty()) jobs.Push(job);
      } else if (result == Result::kPipelined) {
        held_.push_back(std::move(stmt));
      }
      queues.Push(queue);
    }
  }

 private:
  enum class Result { kReady, kPipelined, kDiscarded };

  // Tries the gang in each domain in order on a statement of its own (all or nothing within one
  // domain) and keeps the first where it becomes ready (committed) or pipelined (held). Returns
  // true if the gang was committed. When it fits nowhere, nothing stays placed and the job's fit
  // error says why.
  bool AllocateInDomains(Session& ssn, const QueueInfo& queue, JobInfo& job, TaskQueue& tasks,
                         const JobDomains& domains) {
    for (const NodeDomain& domain : domains.domains) {
      TaskQueue attempt = tasks;
      auto stmt = std::make_unique<Statement>(&ssn);
      const Result result = AllocateTasks(ssn, queue, job, attempt, *stmt, &domain);
      if (result == Result::kReady) {
        stmt->Commit();
        tasks = std::move(attempt);
        job.job_fit_errors.clear();
        return true;
      }
      if (result == Result::kPipelined && job.WaitingTaskNum() > 0) {
        held_.push_back(std::move(stmt));
        tasks = std::move(attempt);
        job.job_fit_errors.clear();
        return false;
      }
      // Not even pipelined in this domain (or "pipelined" with nothing waiting): undo, next.
      if (result == Result::kPipelined) stmt->Discard();
    }
    job.job_fit_errors = domains.unsatisfied;
    return false;
  }

  // The nodes of `domain` on which `task` passes the allocate predicates, in name order.
  static std::vector<NodeInfo*> PredicateDomainNodes(const Session& ssn, const TaskInfo& task,
                                                     const NodeDomain& domain, FitErrors* errors) {
    std::vector<NodeInfo*> feasible;
    for (NodeInfo* node : domain.nodes) {
      if (PassesAllocatePredicate(ssn, task, *node, errors)) feasible.push_back(node);
    }
    return feasible;
  }

  enum class Placement { kPlaced, kNoNode, kRefused };

  // Places `task` on `stmt` on the best node of `domain` (null: the sampled nodes), Allocated
  // where it fits Idle now, else Pipelined. kNoNode: no node passes the predicates; kRefused:
  // the queue or the statement refused it. Either way the task's fit error says why.
  static Placement PlaceTask(Session& ssn, const QueueInfo& queue, JobInfo& job, TaskInfo* task,
                             Statement& stmt, const NodeDomain* domain) {
    if (!ssn.Allocatable(queue, *task)) {
      FitErrors fe;
      fe.SetError(fmt::format(
          "queue {} cannot allocate {} more for task {} (it would exceed the queue's deserved "
          "share or capability)",
          queue.name, task->resreq.ToString(), task->Key()));
      job.nodes_fit_errors[task->uid] = std::move(fe);
      return Placement::kRefused;
    }
    // A pod preempt nominated (status.nominatedNodeName) goes back to the node freed for it
    // when it still fits there, as in Volcano.
    if (NodeInfo* nominated = NominatedNode(ssn, *task); nominated != nullptr) {
      absl::Status s = task->init_resreq.LessEqual(nominated->idle())
                           ? stmt.Allocate(task, nominated)
                           : stmt.Pipeline(task, nominated);
      if (s.ok()) {
        job.nodes_fit_errors.erase(task->uid);
        return Placement::kPlaced;
      }
    }
    FitErrors errors;
    std::vector<NodeInfo*> feasible = domain != nullptr
                                          ? PredicateDomainNodes(ssn, *task, *domain, &errors)
                                          : PredicateSampledNodes(ssn, *task, &errors);
    if (feasible.empty()) {
      job.nodes_fit_errors[task->uid] = std::move(errors);
      return Placement::kNoNode;
    }
    // Nodes where the task fits in Idle now come before those where it fits only once
    // releasing pods are gone.
    std::vector<NodeInfo*> idle_fit;
    for (NodeInfo* n : feasible) {
      if (task->init_resreq.LessEqual(n->idle())) idle_fit.push_back(n);
    }
    NodeInfo* node = SelectBestNode(ssn, *task, idle_fit.empty() ? feasible : idle_fit);
    absl::Status s = task->init_resreq.LessEqual(node->idle()) ? stmt.Allocate(task, node)
                                                               : stmt.Pipeline(task, node);
    if (!s.ok()) {
      FitErrors fe;
      fe.SetNodeError(node->name(), {std::string(MessageOf(s))});
      job.nodes_fit_errors[task->uid] = std::move(fe);
      return Placement::kRefused;
    }
    job.nodes_fit_errors.erase(task->uid);
    return Placement::kPlaced;
  }

  // Places the job's tasks on `stmt`, on any node (`domain` null) or only on the domain's.
  Result AllocateTasks(Session& ssn, const QueueInfo& queue, JobInfo& job, TaskQueue& tasks,
                       Statement& stmt, const NodeDomain* domain) {
    std::set<std::string> failed_roles;
    std::set<std::string> failed_tasks;
    while (!tasks.Empty()) {
      TaskInfo* task = tasks.Pop();
      if (!task->role.empty() && failed_roles.count(task->role) != 0 &&
          ssn.Allocatable(queue, *task)) {
        // A task of the same role found no node in this pass; its siblings would not either.
        failed_tasks.insert(task->uid);
        continue;
      }
      const Placement placed = PlaceTask(ssn, queue, job, task, stmt, domain);
      if (placed == Placement::kNoNode) {
        failed_tasks.insert(task->uid);
        if (!task->role.empty()) failed_roles.insert(task->role);
        if (!NeedContinueAllocating(job, failed_roles, failed_tasks)) break;
        continue;
      }
      if (placed == Placement::kPlaced && ssn.JobReady(job)) break;
    }
    if (ssn.JobReady(job)) return Result::kReady;
    if (ssn.JobPipelined(job)) return Result::kPipelined;
    stmt.Discard();
    return Result::kDiscarded;
  }

  // A job with spec.subGroupPolicy. Within each of the job's own domains in turn (its
  // networkTopology; none: the whole cluster) every incomplete sub-group is placed as a unit on
  // a statement of its own, in the first domain its own networkTopology allows where all its
  // missing tasks fit; the job's tasks outside any sub-group are placed after them. The whole
  // attempt is committed when the gang is ready (JobReady and every policy's minSubGroups),
  // held when it is pipelined, and undone otherwise; a sub-group that fits nowhere stays
  // unplaced and says why on the PodGroup ("sub-group worker-1: hard tier 1: ...").
  void AllocateSubGroups(Session& ssn, const QueueInfo& queue, JobInfo& job, TaskQueue& tasks) {
    std::vector<TaskInfo*> order;  // the pending tasks in task order
    for (TaskQueue copy = tasks; !copy.Empty();) order.push_back(copy.Pop());
    std::optional<JobDomains> job_domains = ssn.JobDomainsFor(job);
    std::vector<const NodeDomain*> bounds;
    if (job_domains.has_value()) {
      for (const NodeDomain& d : job_domains->domains) bounds.push_back(&d);
    } else {
      bounds.push_back(nullptr);
    }
    std::string why;
    for (const NodeDomain* bound : bounds) {
      std::vector<std::unique_ptr<Statement>> stmts;
      std::vector<std::string> waiting;
      std::map<std::string, SubGroup> groups = job.SubGroups();
      std::map<std::string, std::string> group_of;  // task uid -> sub-group
      for (const auto& [name, g] : groups) {
        for (const TaskInfo* t : g.tasks) group_of.emplace(t->uid, name);
      }
      // Tasks beyond a complete sub-group's size, each placed where it fits, next to its group.
      auto extra = std::make_unique<Statement>(&ssn);
      for (auto& [name, g] : groups) {
        std::vector<TaskInfo*> pending;
        for (TaskInfo* t : order) {
          auto it = group_of.find(t->uid);
          if (it != group_of.end() && it->second == name) pending.push_back(t);
        }
        if (pending.empty()) continue;
        std::optional<JobDomains> domains = ssn.SubGroupDomainsFor(job, g, bound);
        std::vector<const NodeDomain*> candidates;
        if (domains.has_value()) {
          for (const NodeDomain& d : domains->domains) candidates.push_back(&d);
        } else {
          candidates.push_back(bound);
        }
        if (g.Complete()) {
          for (TaskInfo* t : pending) {
            for (const NodeDomain* domain : candidates) {
              if (PlaceTask(ssn, queue, job, t, *extra, domain) == Placement::kPlaced) break;
            }
          }
          continue;
        }
        bool placed = false;
        for (const NodeDomain* domain : candidates) {
          auto stmt = std::make_unique<Statement>(&ssn);
          if (PlaceSubGroup(ssn, queue, job, g, pending, *stmt, domain)) {
            stmts.push_back(std::move(stmt));
            placed = true;
            break;
          }
          stmt->Discard();
        }
        if (!placed) {
          std::string reason = domains.has_value() ? domains->unsatisfied : std::string();
          if (reason.empty()) {
            reason = fmt::format("its {} missing task(s) do not all fit on the nodes{}",
                                 g.size - g.ready - g.waiting,
                                 bound != nullptr ? " of " + bound->name : std::string());
          }
          waiting.push_back(fmt::format("sub-group {}: {}", name, reason));
        }
      }
      // The job's tasks outside any sub-group: its own gang rules decide below.
      auto rest = std::make_unique<Statement>(&ssn);
      for (TaskInfo* t : order) {
        if (group_of.count(t->uid) == 0 && t->status == TaskStatus::kPending) {
          PlaceTask(ssn, queue, job, t, *rest, bound);
        }
      }
      stmts.push_back(std::move(extra));
      stmts.push_back(std::move(rest));
      const std::string short_groups = job.SubGroupsShort();
      if (short_groups.empty() && ssn.JobReady(job)) {
        for (auto& stmt : stmts) stmt->Commit();
        job.job_fit_errors = fmt::format("{}", fmt::join(waiting, "; "));
        return;
      }
      if (short_groups.empty() && ssn.JobPipelined(job) && job.WaitingTaskNum() > 0) {
        for (auto& stmt : stmts) held_.push_back(std::move(stmt));
        job.job_fit_errors = fmt::format("{}", fmt::join(waiting, "; "));
        return;
      }
      for (auto it = stmts.rbegin(); it != stmts.rend(); ++it) (*it)->Discard();
      if (why.empty()) {
        if (!waiting.empty()) {
          why = fmt::format("{}", fmt::join(waiting, "; "));
        } else {
          why = short_groups.empty() ? std::string(
                                           "the job's tasks outside its sub-groups do not "
                                           "make its gang")
                                     : short_groups;
        }
        if (bound != nullptr && bounds.size() > 1) why += fmt::format(" (in {})", bound->name);
      }
    }
    job.job_fit_errors = bounds.empty() && job_domains.has_value() ? job_domains->unsatisfied : why;
  }

  // Places the missing tasks of sub-group `g` (`pending`, in task order) on `stmt` inside
  // `domain` (null: any node). True when the sub-group is complete; false leaves the statement
  // for the caller to discard.
  static bool PlaceSubGroup(Session& ssn, const QueueInfo& queue, JobInfo& job, const SubGroup& g,
                            const std::vector<TaskInfo*>& pending, Statement& stmt,
                            const NodeDomain* domain) {
    const int required = g.size - g.ready - g.waiting;
    int placed = 0;
    for (TaskInfo* t : pending) {
      if (PlaceTask(ssn, queue, job, t, stmt, domain) == Placement::kPlaced) {
        ++placed;
      } else if (placed < required) {
        return false;
      }
    }
    return placed >= required;
  }

  std::vector<std::unique_ptr<Statement>> held_;
};

}  // namespace

std::unique_ptr<Action> NewAllocateAction() { return std::make_unique<AllocateAction>(); }

}  // namespace basalt::sched
