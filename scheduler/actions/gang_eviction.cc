#include "scheduler/actions/gang_eviction.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/util/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/actions/util.h"
#include "scheduler/framework/statement.h"

namespace basalt::sched {
namespace {

enum class BundleType { kSafe = 0, kWhole = 1 };

struct Bundle {
  BundleType type = BundleType::kSafe;
  const JobInfo* job = nullptr;
  std::vector<const TaskInfo*> tasks;
  Resource local;   // what its pods free
  Resource global;  // whole: every pod of the job (what the job loses); safe: nothing
};

Resource SumResreq(const std::vector<const TaskInfo*>& tasks) {
  Resource r;
  for (const TaskInfo* t : tasks) r += t->resreq;
  return r;
}

bool IsCriticalPod(const TaskInfo& t) {
  return t.namespace_name == "kube-system" || t.priority_class_name == "system-cluster-critical" ||
         t.priority_class_name == "system-node-critical";
}

// Splits one victim job's candidates into its safe and whole bundles (see the header).
std::vector<Bundle> MakeJobBundles(const JobInfo& job, std::vector<const TaskInfo*> tasks) {
  std::sort(tasks.begin(), tasks.end(), [](const TaskInfo* l, const TaskInfo* r) {
    if (l->priority != r->priority) return l->priority < r->priority;
    return l->uid < r->uid;
  });
  int surplus = job.ReadyTaskNum() - job.min_available;
  if (surplus < 0) {
    // Already below its gang: evicting more breaks nothing that is not broken.
    return {Bundle{BundleType::kSafe, &job, tasks, SumResreq(tasks), Resource()}};
  }
  // Roles keep their minTaskMember, unless minAvailable is below their sum (gang's own bypass).
  int64_t role_min_total = 0;
  for (const auto& [role, n] : job.task_min_available) role_min_total += n;
  const bool enforce_roles = job.min_available >= role_min_total;
  std::map<std::string, int> role_surplus;
  if (enforce_roles) {
    std::map<std::string, int> role_ready;
    for (const auto& [uid, t] : job.tasks()) {
      if (IsAllocatedStatus(t.status) || t.status == TaskStatus::kSucceeded ||
          (t.status == TaskStatus::kPending && t.init_resreq.IsEmpty())) {
        ++role_ready[t.role];
      }
    }
    for (const auto& [role, n] : job.task_min_available) role_surplus[role] = role_ready[role] - n;
  }
  std::vector<const TaskInfo*> safe;
  std::vector<const TaskInfo*> whole;
  for (const TaskInfo* t : tasks) {
    auto role_it = enforce_roles ? role_surplus.find(t->role) : role_surplus.end();
    const bool role_safe = role_it == role_surplus.end() || role_it->second > 0;
    if (surplus > 0 && role_safe) {
      safe.push_back(t);
      --surplus;
      if (role_it != role_surplus.end()) --role_it->second;
    } else {
      whole.push_back(t);
    }
  }
  std::vector<Bundle> out;
  if (!safe.empty()) out.push_back(Bundle{BundleType::kSafe, &job, safe, SumResreq(safe), {}});
  if (!whole.empty()) {
    Resource all;
    for (const auto& [uid, t] : job.tasks()) all += t.resreq;
    out.push_back(Bundle{BundleType::kWhole, &job, whole, SumResreq(whole), all});
  }
  return out;
}

// Sum over the need's dimensions of what `res` gives of each, as a fraction of the need
// (capped at the need when `cap`).
double ScoreAgainstNeed(const Resource& res, const Resource& need, bool cap) {
  double score = 0;
  for (const std::string& name : need.Names()) {
    const int64_t n = need.Get(name);
    if (n <= 0) continue;
    int64_t v = res.Get(name);
    if (cap) v = std::min(v, n);
    score += static_cast<double>(v) / static_cast<double>(n);
  }
  return score;
}

double BundleReturn(const Bundle& b, const Resource& need) {
  const double global = ScoreAgainstNeed(b.global, need, false);
  if (global == 0) return std::numeric_limits<double>::infinity();
  return ScoreAgainstNeed(b.local, need, true) / global;
}

int Compare(bool l_before_r, bool r_before_l) {
  if (l_before_r == r_before_l) return 0;
  return l_before_r ? -1 : 1;
}

class GangEviction {
 public:
  GangEviction(Session& ssn, GangEvictionKind kind, const GangEvictionOptions& options)
      : ssn_(ssn), kind_(kind), options_(options) {}

  void Run() {
    auto [queues, starving] = CollectStarvingJobs(ssn_);
    while (!queues.Empty()) {
      QueueInfo* queue = queues.Pop();
      if (kind_ == GangEvictionKind::kReclaim && ssn_.Overused(*queue)) continue;
      auto& jobs = starving.at(queue->name);
      while (!jobs.Empty()) {
        JobInfo* job = jobs.Pop();
        Statement stmt(&ssn_);
        EvictFor(*queue, *job, stmt);
        // Only a gang that is then placed as a whole keeps its evictions.
        if (ssn_.JobPipelined(*job)) {
          stmt.Commit();
        } else {
          stmt.Discard();
        }
      }
    }
  }

 private:
  std::string_view ActionName() const {
    return kind_ == GangEvictionKind::kPreempt ? "gangpreempt" : "gangreclaim";
  }

  // The job's pending pods that may take room, in task order.
  std::vector<TaskInfo*> PendingTasks(JobInfo& job) const {
    std::vector<TaskInfo*> tasks;
    for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
      if (t->preempt_never || t->resreq.IsEmpty()) continue;
      if (job.never_fit_tasks.count(uid) != 0) continue;  // no eviction makes room
      tasks.push_back(t);
    }
    std::sort(tasks.begin(), tasks.end(),
              [this](const TaskInfo* l, const TaskInfo* r) { return ssn_.TaskOrder(*l, *r); });
    return tasks;
  }

  std::vector<std::vector<NodeInfo*>> Domains(const JobInfo& job) {
    std::vector<std::vector<NodeInfo*>> out;
    std::optional<JobDomains> d;
    {
      ByCapacity by_capacity(ssn_);
      d = ssn_.JobDomainsFor(job);
    }
    if (d.has_value()) {
      for (const NodeDomain& domain : d->domains) {
        if (static_cast<int>(out.size()) >= options_.max_domains) break;
        out.push_back(domain.nodes);
      }
    } else {
      out.push_back(ssn_.node_list());
    }
    return out;
  }

  // The rules no configuration relaxes, then the action's own: gangpreempt takes pods of a
  // lower-priority job of the same queue; gangreclaim Running pods of another, reclaimable
  // queue.
  bool MayEvict(const QueueInfo& queue, const JobInfo& preemptor, const TaskInfo& t) const {
    if (!t.preemptable || t.job_id.empty() || t.job_id == preemptor.uid || IsCriticalPod(t)) {
      return false;
    }
    const JobInfo* vj = ssn_.FindJob(t.job_id);
    if (vj == nullptr || vj->not_preemptable) return false;
    if (kind_ == GangEvictionKind::kPreempt) {
      if (t.status != TaskStatus::kRunning && t.status != TaskStatus::kBound) return false;
      return vj->queue == queue.name && vj->priority < preemptor.priority;
    }
    if (t.status != TaskStatus::kRunning || vj->queue == queue.name) return false;
    const QueueInfo* vq = ssn_.FindQueue(vj->queue);
    return vq != nullptr && vq->reclaimable;
  }

  int CompareBundles(const Bundle& l, const Bundle& r, const Resource& need) const {
    if (kind_ == GangEvictionKind::kReclaim && l.job->queue != r.job->queue) {
      // The queue the plugins would serve last gives first.
      const QueueInfo* lq = ssn_.FindQueue(l.job->queue);
      const QueueInfo* rq = ssn_.FindQueue(r.job->queue);
      if (int c = Compare(ssn_.QueueOrder(*rq, *lq), ssn_.QueueOrder(*lq, *rq)); c != 0) return c;
      return l.job->queue < r.job->queue ? -1 : 1;
    }
    const int type = Compare(l.type < r.type, r.type < l.type);
    const int prio = l.job == r.job ? 0
                                    : Compare(l.job->priority < r.job->priority,
                                              r.job->priority < l.job->priority);
    if (options_.victim_order == VictimOrderPolicy::kPriorityFirst) {
      if (prio != 0) return prio;
      if (type != 0) return type;
    } else {
      if (type != 0) return type;
      if (prio != 0) return prio;
    }
    if (kind_ == GangEvictionKind::kPreempt && l.job != r.job) {
      // The less important job (the plugins' job order reversed) first.
      if (int c = Compare(ssn_.JobOrder(*r.job, *l.job), ssn_.JobOrder(*l.job, *r.job)); c != 0) {
        return c;
      }
    }
    const double lr = BundleReturn(l, need);
    const double rr = BundleReturn(r, need);
    if (lr != rr) return lr > rr ? -1 : 1;
    if (l.job->uid != r.job->uid) return l.job->uid < r.job->uid ? -1 : 1;
    if (l.tasks.front()->uid != r.tasks.front()->uid) {
      return l.tasks.front()->uid < r.tasks.front()->uid ? -1 : 1;
    }
    return Compare(l.tasks.size() < r.tasks.size(), r.tasks.size() < l.tasks.size());
  }

  void SortBundles(std::vector<Bundle>& bundles, const Resource& need) const {
    std::stable_sort(bundles.begin(), bundles.end(), [&](const Bundle& l, const Bundle& r) {
      return CompareBundles(l, r, need) < 0;
    });
  }

  // The bundles of `nodes` in eviction order, filtered by the plugins.
  std::vector<Bundle> SelectBundles(const QueueInfo& queue, const JobInfo& job,
                                    const TaskInfo& representative,
                                    const std::vector<NodeInfo*>& nodes,
                                    const Resource& need) const {
    std::map<std::string, std::vector<const TaskInfo*>> by_job;
    for (NodeInfo* node : nodes) {
      for (const auto& [uid, t] : node->tasks()) {
        if (MayEvict(queue, job, *t)) by_job[t->job_id].push_back(t);
      }
    }
    std::vector<Bundle> bundles;
    for (auto& [id, tasks] : by_job) {
      for (Bundle& b : MakeJobBundles(*ssn_.FindJob(id), std::move(tasks))) {
        bundles.push_back(std::move(b));
      }
    }
    if (bundles.empty()) return {};
    SortBundles(bundles, need);
    std::vector<const TaskInfo*> flat;
    for (const Bundle& b : bundles) flat.insert(flat.end(), b.tasks.begin(), b.tasks.end());
    const std::vector<const TaskInfo*> allowed_list =
        kind_ == GangEvictionKind::kPreempt ? ssn_.GangPreemptable(representative, flat)
                                            : ssn_.GangReclaimable(representative, flat);
    const std::set<const TaskInfo*> allowed(allowed_list.begin(), allowed_list.end());
    std::vector<Bundle> valid;
    for (Bundle& b : bundles) {
      std::vector<const TaskInfo*> approved;
      for (const TaskInfo* t : b.tasks) {
        if (allowed.count(t) != 0) approved.push_back(t);
      }
      if (b.type == BundleType::kWhole) {
        if (approved.size() == b.tasks.size() && options_.allow_whole_bundle) {
          valid.push_back(std::move(b));
        }
      } else if (!approved.empty()) {
        b.local = SumResreq(approved);
        b.tasks = std::move(approved);
        valid.push_back(std::move(b));
      }
    }
    SortBundles(valid, need);
    return valid;
  }

  // Drops victims the gang does not need (see the header); returns the victims to try first.
  std::vector<const TaskInfo*> Prune(const std::vector<TaskInfo*>& pending,
                                     const std::vector<NodeInfo*>& nodes,
                                     const std::vector<Bundle>& selected) const {
    std::vector<const TaskInfo*> original;
    for (const Bundle& b : selected)
      original.insert(original.end(), b.tasks.begin(), b.tasks.end());
    std::map<std::string, std::vector<NodeInfo*>> viable;  // pending task -> nodes
    for (TaskInfo* task : pending) {
      auto& v = viable[task->uid];
      for (NodeInfo* node : nodes) {
        const Code code = ssn_.Predicate(*task, *node).code();
        if (code == Code::kUnschedulableAndUnresolvable || code == Code::kWait ||
            code == Code::kSkip) {
          continue;
        }
        v.push_back(node);
      }
      if (v.empty()) return original;
    }
    std::map<std::string, Resource> available;
    for (NodeInfo* node : nodes) available[node->name()] = node->FutureIdle();
    for (const TaskInfo* v : original) available[v->node_name] += v->resreq;
    auto fits = [&](std::map<std::string, Resource> avail) {
      for (TaskInfo* task : pending) {
        bool placed = false;
        for (NodeInfo* node : viable[task->uid]) {
          Resource& a = avail[node->name()];
          if (!task->init_resreq.LessEqual(a)) continue;
          a = a.SubFloorZero(task->init_resreq);
          placed = true;
          break;
        }
        if (!placed) return false;
      }
      return true;
    };
    // Units, most protected first: the bundles in reverse eviction order; a whole bundle is one
    // unit, a safe bundle one unit per pod, the pod freeing the most first.
    std::vector<std::vector<const TaskInfo*>> units;
    for (size_t i = selected.size(); i-- > 0;) {
      const Bundle& b = selected[i];
      if (b.type == BundleType::kWhole) {
        units.push_back(b.tasks);
        continue;
      }
      std::vector<const TaskInfo*> pods = b.tasks;
      std::stable_sort(pods.begin(), pods.end(), [](const TaskInfo* l, const TaskInfo* r) {
        if (l->resreq.milli_cpu() != r->resreq.milli_cpu()) {
          return l->resreq.milli_cpu() > r->resreq.milli_cpu();
        }
        if (l->resreq.memory() != r->resreq.memory()) {
          return l->resreq.memory() > r->resreq.memory();
        }
        int64_t ls = 0;
        int64_t rs = 0;
        for (const auto& [name, v] : l->resreq.scalars()) ls = SaturatingAdd(ls, v);
        for (const auto& [name, v] : r->resreq.scalars()) rs = SaturatingAdd(rs, v);
        if (ls != rs) return ls > rs;
        return l->uid > r->uid;
      });
      for (const TaskInfo* p : pods) units.push_back({p});
    }
    std::set<const TaskInfo*> dropped;
    for (const auto& unit : units) {
      std::map<std::string, Resource> without = available;
      for (const TaskInfo* t : unit) {
        without[t->node_name] = without[t->node_name].SubFloorZero(t->resreq);
      }
      if (!fits(without)) continue;
      available = std::move(without);
      dropped.insert(unit.begin(), unit.end());
    }
    std::vector<const TaskInfo*> pruned;
    for (const TaskInfo* t : original) {
      if (dropped.count(t) == 0) pruned.push_back(t);
    }
    return pruned;
  }

  // Evicts `victims` and pipelines every pending pod into `nodes`; on success the operations are
  // merged into `stmt`, else undone.
  // `required` (sub-group) > 0: the first pods of `pending` must be placed, later ones are
  // placed where they fit, and success is `required` pods placed; 0: every pod must be placed
  // and the job become pipelined.
  bool Simulate(const QueueInfo& queue, JobInfo& job, const std::vector<TaskInfo*>& pending,
                const std::vector<NodeInfo*>& nodes, const std::vector<const TaskInfo*>& victims,
                Statement& stmt, int required = 0) {
    EvictionCause cause;
    cause.reason = std::string(ActionName());
    cause.preemptor_job = job.uid;
    cause.preemptor_queue = job.queue;
    cause.preemptor_priority = job.priority;
    Statement trial(&ssn_);
    for (const TaskInfo* v : victims) {
      (void)trial.Evict(ssn_.FindJob(v->job_id)->FindTask(v->uid), cause);
    }
    int placed = 0;
    for (TaskInfo* task : pending) {
      const bool must = required == 0 || placed < required;
      if (!ssn_.Allocatable(queue, *task)) {
        if (!must) continue;
        trial.Discard();
        return false;
      }
      std::vector<NodeInfo*> fit;
      for (NodeInfo* node : nodes) {
        if (PredicateForAllocate(ssn_, *task, *node).ok()) fit.push_back(node);
      }
      NodeInfo* best = SelectBestNode(ssn_, *task, fit);
      if (best == nullptr || !trial.Pipeline(task, best).ok()) {
        if (!must) continue;
        trial.Discard();
        return false;
      }
      ++placed;
    }
    if (required == 0 && !ssn_.JobPipelined(job)) {
      trial.Discard();
      return false;
    }
    stmt.Merge(trial);
    return true;
  }

  // Frees room inside `nodes` (one domain) for `pending` (see the header); true when the
  // simulated placement succeeded and was merged into `stmt`. `required` as for Simulate.
  // `free_only`: only room already free is used (no victims).
  bool EvictInDomain(const QueueInfo& queue, JobInfo& job, const std::vector<TaskInfo*>& pending,
                     const std::vector<NodeInfo*>& nodes, Statement& stmt, int required,
                     bool free_only) {
    if (nodes.empty() || pending.empty()) return false;
    Resource need;
    for (size_t i = 0; i < pending.size() && (required == 0 || static_cast<int>(i) < required);
         ++i) {
      need += pending[i]->init_resreq;
    }
    const std::vector<TaskInfo*> must(
        pending.begin(), required == 0
                             ? pending.end()
                             : pending.begin() + std::min<size_t>(required, pending.size()));
    Resource idle;
    for (const NodeInfo* node : nodes) idle += node->FutureIdle();
    // Room already freed (victims of an earlier cycle still terminating) is used first.
    if (free_only) {
      return need.LessEqual(idle) && Simulate(queue, job, pending, nodes, {}, stmt, required);
    }
    std::vector<Bundle> bundles = SelectBundles(queue, job, *pending.front(), nodes, need);
    if (bundles.empty()) return false;
    std::vector<Bundle> selected;
    Resource freed;
    for (Bundle& b : bundles) {
      freed += b.local;
      selected.push_back(std::move(b));
      if (!need.LessEqual(idle + freed)) continue;
      std::vector<const TaskInfo*> pruned = Prune(must, nodes, selected);
      if (Simulate(queue, job, pending, nodes, pruned, stmt, required)) return true;
      size_t all = 0;
      for (const Bundle& s : selected) all += s.tasks.size();
      if (pruned.size() == all) continue;
      std::vector<const TaskInfo*> original;
      for (const Bundle& s : selected) {
        original.insert(original.end(), s.tasks.begin(), s.tasks.end());
      }
      if (Simulate(queue, job, pending, nodes, original, stmt, required)) return true;
    }
    return false;
  }

  void EvictFor(const QueueInfo& queue, JobInfo& job, Statement& stmt) {
    const std::vector<TaskInfo*> pending = PendingTasks(job);
    if (pending.empty()) return;
    if (kind_ == GangEvictionKind::kReclaim) {
      for (const TaskInfo* t : pending) {
        if (!ssn_.Preemptive(queue, *t)) return;
      }
    }
    ssn_.NotePreemptionAttempt();
    if (!job.sub_group_policies.empty()) {
      EvictForSubGroups(queue, job, pending, stmt);
      return;
    }
    for (const std::vector<NodeInfo*>& nodes : Domains(job)) {
      if (EvictInDomain(queue, job, pending, nodes, stmt, 0, true)) return;
      if (EvictInDomain(queue, job, pending, nodes, stmt, 0, false)) return;
    }
  }

  // A job with spec.subGroupPolicy (partitions): within each of the job's own domains in turn
  // (its networkTopology; none: every node), each incomplete sub-group is placed as a unit
  // inside one of its own candidate domains (SubGroupDomainsFor: its networkTopology), first
  // where room is already free, else in the first domain where victims of that domain alone
  // make room; the job's pods outside any sub-group are then placed where room is free. The
  // attempt is kept only when every policy's minSubGroups holds and the job is pipelined, so
  // nothing is evicted for a gang that would still not run. When it fails everywhere, the job
  // fit error names the sub-groups no domain could take, with the tier.
  void EvictForSubGroups(const QueueInfo& queue, JobInfo& job,
                         const std::vector<TaskInfo*>& pending, Statement& stmt) {
    std::optional<JobDomains> job_domains;
    {
      ByCapacity by_capacity(ssn_);
      job_domains = ssn_.JobDomainsFor(job);
    }
    std::vector<const NodeDomain*> bounds;
    if (job_domains.has_value()) {
      for (const NodeDomain& d : job_domains->domains) {
        if (static_cast<int>(bounds.size()) >= options_.max_domains) break;
        bounds.push_back(&d);
      }
    } else {
      bounds.push_back(nullptr);
    }
    std::string why;
    for (const NodeDomain* bound : bounds) {
      Statement attempt(&ssn_);
      std::vector<std::string> failed;
      std::map<std::string, SubGroup> groups = job.SubGroups();
      std::set<std::string> in_group;
      for (auto& [name, g] : groups) {
        for (const TaskInfo* t : g.tasks) in_group.insert(t->uid);
        if (g.Complete()) continue;
        std::vector<TaskInfo*> group_pending;
        for (TaskInfo* t : pending) {
          if (std::find(g.tasks.begin(), g.tasks.end(), t) != g.tasks.end()) {
            group_pending.push_back(t);
          }
        }
        const int required = g.size - g.ready - g.waiting;
        if (static_cast<int>(group_pending.size()) < required) {
          failed.push_back(
              fmt::format("sub-group {}: only {} of its {} missing pod(s) can take "
                          "room",
                          name, group_pending.size(), required));
          continue;
        }
        std::optional<JobDomains> domains;
        {
          ByCapacity by_capacity(ssn_);
          domains = ssn_.SubGroupDomainsFor(job, g, bound);
        }
        std::vector<std::vector<NodeInfo*>> candidates;
        int32_t tier = 0;
        if (domains.has_value()) {
          for (const NodeDomain& d : domains->domains) {
            if (static_cast<int>(candidates.size()) >= options_.max_domains) break;
            candidates.push_back(d.nodes);
            tier = std::max(tier, d.tier);
          }
        } else {
          candidates.push_back(bound != nullptr ? bound->nodes : ssn_.node_list());
        }
        bool placed = false;
        for (bool free_only : {true, false}) {
          for (const std::vector<NodeInfo*>& nodes : candidates) {
            if (EvictInDomain(queue, job, group_pending, nodes, attempt, required, free_only)) {
              placed = true;
              break;
            }
          }
          if (placed) break;
        }
        if (!placed) {
          std::string where;
          if (domains.has_value()) {
            const std::optional<NetworkTopologyConstraint>& nt =
                job.sub_group_policies[g.policy].network_topology;
            const int32_t max_tier =
                nt.has_value() && nt->highest_tier.has_value() ? *nt->highest_tier : tier;
            const char* mode = nt.has_value() && !nt->hard ? "soft" : "hard";
            where = candidates.empty() ? fmt::format(
                                             "no domain it allows could hold it even with victims "
                                             "evicted: {}",
                                             domains->unsatisfied.empty()
                                                 ? fmt::format("{} tier {}", mode, max_tier)
                                                 : domains->unsatisfied)
                                       : fmt::format(
                                             "no victims make room inside any of its {} allowed "
                                             "domain(s) ({} tier {})",
                                             candidates.size(), mode, max_tier);
          } else {
            where = fmt::format("no victims make room {}", bound != nullptr
                                                               ? "inside " + bound->name
                                                               : std::string("on any node"));
          }
          failed.push_back(fmt::format("sub-group {}: {}", name, where));
        }
      }
      for (TaskInfo* t : pending) {
        if (in_group.count(t->uid) != 0 || t->status != TaskStatus::kPending) continue;
        std::vector<NodeInfo*> nodes = bound != nullptr ? bound->nodes : ssn_.node_list();
        (void)EvictInDomain(queue, job, {t}, nodes, attempt, 1, true);
      }
      if (job.SubGroupsShort().empty() && ssn_.JobPipelined(job)) {
        stmt.Merge(attempt);
        return;
      }
      attempt.Discard();
      if (why.empty()) {
        why = failed.empty() ? job.SubGroupsShort() : fmt::format("{}", fmt::join(failed, "; "));
        if (bound != nullptr && bounds.size() > 1) why += fmt::format(" (in {})", bound->name);
      }
    }
    if (why.empty()) return;
    const std::string note = fmt::format("{}: {}", ActionName(), why);
    job.job_fit_errors = job.job_fit_errors.empty() ? note : job.job_fit_errors + "; " + note;
  }

  Session& ssn_;
  GangEvictionKind kind_;
  GangEvictionOptions options_;
};

}  // namespace

absl::StatusOr<GangEvictionOptions> ParseGangEvictionOptions(const Arguments& args) {
  GangEvictionOptions o;
  BASALT_ASSIGN_OR_RETURN(int64_t max_domains, args.GetInt("maxDomains", o.max_domains));
  // As Volcano: a value <= 0 means the default.
  if (max_domains > 0) {
    o.max_domains = static_cast<int>(std::min<int64_t>(max_domains, 1 << 20));
  }
  BASALT_ASSIGN_OR_RETURN(o.allow_whole_bundle,
                          args.GetBool("allowWholeBundle", o.allow_whole_bundle));
  const std::string policy = args.GetString("victimOrderPolicy", "safe-first");
  if (policy == "priority-first") {
    o.victim_order = VictimOrderPolicy::kPriorityFirst;
  } else if (policy != "safe-first") {
    return absl::InvalidArgumentError(
        fmt::format("victimOrderPolicy must be safe-first or priority-first, got \"{}\"", policy));
  }
  return o;
}

void RunGangEviction(Session& ssn, GangEvictionKind kind, const GangEvictionOptions& options) {
  GangEviction(ssn, kind, options).Run();
}

}  // namespace basalt::sched
