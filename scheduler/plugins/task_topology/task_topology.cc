#include "scheduler/plugins/task_topology/task_topology.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/api/task_topology.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

// How strongly a task is tied to the others, strongest first in the task order (Volcano's
// ranking of the four kinds).
constexpr int kSelfAntiAffinity = 4;
constexpr int kInterAffinity = 3;
constexpr int kSelfAffinity = 2;
constexpr int kInterAntiAffinity = 1;

// One pending member of a bucket.
struct PendingMember {
  std::string uid;
  Resource request;
  double size = 0;  // 1 milli-CPU = 1 MiB = 1 milli-unit of a scalar, to sort smallest first
};

double SizeOf(const Resource& r) {
  double size = static_cast<double>(r.milli_cpu()) + static_cast<double>(r.memory()) / (1 << 20);
  for (const auto& [name, v] : r.scalars()) size += static_cast<double>(v);
  return size;
}

struct Bucket {
  int index = 0;
  std::map<std::string, int> roles;      // role -> members (placed and pending) at open
  std::vector<PendingMember> pending;    // smallest first
  std::set<std::string> pending_uids;    // the uids of `pending`
  Resource pending_request;              // sum over `pending`
  std::map<std::string, int> placed_on;  // node -> members placed there
  int size_at_open = 0;

  void AddPending(PendingMember m) {
    pending_request += m.request;
    pending_uids.insert(m.uid);
    auto at = std::upper_bound(
        pending.begin(), pending.end(), m,
        [](const PendingMember& a, const PendingMember& b) { return a.size < b.size; });
    pending.insert(at, std::move(m));
  }
  // Returns false if `uid` is not pending here.
  bool RemovePending(const std::string& uid) {
    if (pending_uids.count(uid) == 0) return false;
    auto it = std::find_if(pending.begin(), pending.end(),
                           [&](const PendingMember& m) { return m.uid == uid; });
    if (it == pending.end()) return false;
    pending_request -= it->request;
    pending_uids.erase(uid);
    pending.erase(it);
    return true;
  }
};

// The task topology of one job in this session.
class JobTopology {
 public:
  explicit JobTopology(const api::TaskTopology& topo) {
    for (size_t i = 0; i < topo.task_order.size(); ++i) rank_[topo.task_order[i]] = int(i);
    unlisted_rank_ = int(topo.task_order.size());
    Relate(topo.affinity, +1, kSelfAffinity, kInterAffinity);
    Relate(topo.anti_affinity, -1, kSelfAntiAffinity, kInterAntiAffinity);
  }

  // +1 if tasks `a` and `b` should share a node, -1 if they should not, 0 otherwise.
  int Relation(const std::string& a, const std::string& b) const {
    auto it = relation_.find({a, b});
    return it == relation_.end() ? 0 : it->second;
  }
  int Rank(const std::string& role) const {
    auto it = rank_.find(role);
    return it == rank_.end() ? unlisted_rank_ : it->second;
  }
  int Strength(const std::string& role) const {
    auto it = strength_.find(role);
    return it == strength_.end() ? 0 : it->second;
  }
  bool HasRelations(const std::string& role) const { return strength_.count(role) != 0; }

  // Sorts the job's tasks into buckets (see the header).
  void BuildBuckets(const JobInfo& job) {
    // Placed pods seed one bucket per node (node-name order).
    std::map<std::string, std::vector<const TaskInfo*>> placed_by_node;
    std::vector<const TaskInfo*> pending;
    for (const auto& [uid, t] : job.tasks()) {
      if (!t.node_name.empty() &&
          (IsAllocatedStatus(t.status) || t.status == TaskStatus::kPipelined)) {
        if (!t.role.empty()) roles_on_node_[t.node_name][t.role]++;
        if (HasRelations(t.role)) placed_by_node[t.node_name].push_back(&t);
      } else if (t.status == TaskStatus::kPending && HasRelations(t.role)) {
        pending.push_back(&t);
      }
    }
    for (const auto& [node, tasks] : placed_by_node) {
      Bucket& b = NewBucket();
      for (const TaskInfo* t : tasks) {
        b.roles[t->role]++;
        b.placed_on[node]++;
        bucket_of_[t->uid] = b.index;
      }
    }
    std::sort(pending.begin(), pending.end(), [this](const TaskInfo* l, const TaskInfo* r) {
      if (int a = Rank(l->role), b = Rank(r->role); a != b) return a < b;
      if (int a = Strength(l->role), b = Strength(r->role); a != b) return a > b;
      if (int64_t a = PodNameIndex(l->name), b = PodNameIndex(r->name); a != b) return a < b;
      return l->name < r->name;
    });
    std::vector<double> request_size(buckets_.size(), 0);
    for (const TaskInfo* t : pending) {
      int best = INT_MIN;
      int chosen = -1;
      for (const Bucket& b : buckets_) {
        int score = 0;
        for (const auto& [role, n] : b.roles) score += n * Relation(t->role, role);
        if (chosen < 0 || score > best ||
            (score == best && request_size[b.index] < request_size[chosen])) {
          best = score;
          chosen = b.index;
        }
      }
      if (chosen < 0 || best < 0) {
        chosen = NewBucket().index;
        request_size.push_back(0);
      }
      Bucket& b = buckets_[chosen];
      b.roles[t->role]++;
      PendingMember m{t->uid, t->resreq, SizeOf(t->resreq)};
      request_size[chosen] += m.size;
      b.AddPending(std::move(m));
      bucket_of_[t->uid] = chosen;
    }
    for (Bucket& b : buckets_) {
      for (const auto& [role, n] : b.roles) b.size_at_open += n;
      max_bucket_size_ = std::max(max_bucket_size_, b.size_at_open);
    }
  }

  const Bucket* BucketOf(const std::string& uid) const {
    auto it = bucket_of_.find(uid);
    return it == bucket_of_.end() ? nullptr : &buckets_[it->second];
  }

  // The bucket score of `node` for `task` (a member of `bucket`), before scaling. A node that
  // already holds members of the bucket gets half a point more, so that it wins the tie against
  // an empty node where as many pods would fit (Basalt: Volcano leaves that tie to the other
  // plugins, which then often spread a bucket larger than a node over half-full nodes).
  double Score(const TaskInfo& task, const Bucket& bucket, const NodeInfo& node) const {
    const Resource& avail = node.FutureIdle();
    if (!task.resreq.LessEqual(avail)) return 0;  // the pod cannot go there at all
    double score = 0;
    if (auto it = bucket.placed_on.find(node.name()); it != bucket.placed_on.end()) {
      score += it->second + 0.5;
    }
    if (auto on = roles_on_node_.find(node.name()); on != roles_on_node_.end()) {
      for (const auto& [role, n] : on->second) {
        if (Relation(task.role, role) < 0) score -= n;
      }
    }
    // How many of the bucket's pending pods could join this one on the node.
    Resource others = bucket.pending_request;
    const bool pending_here = bucket.pending_uids.count(task.uid) != 0;
    if (!pending_here) others += task.resreq;  // e.g. the pod was placed elsewhere and undone
    if (others.LessEqual(avail)) {
      return score + static_cast<double>(bucket.pending.size()) + (pending_here ? 0 : 1);
    }
    Resource sum = task.resreq;
    int fit = 1;
    for (const PendingMember& m : bucket.pending) {
      if (m.uid == task.uid) continue;
      Resource next = sum + m.request;
      if (!next.LessEqual(avail)) break;
      sum = std::move(next);
      ++fit;
    }
    return score + fit;
  }

  int max_bucket_size() const { return max_bucket_size_; }

  void Placed(const TaskInfo& task, const std::string& node) {
    if (!task.role.empty()) roles_on_node_[node][task.role]++;
    auto it = bucket_of_.find(task.uid);
    if (it == bucket_of_.end()) return;
    Bucket& b = buckets_[it->second];
    b.RemovePending(task.uid);
    b.placed_on[node]++;
  }

  void Unplaced(const TaskInfo& task, const std::string& node) {
    if (!task.role.empty()) Decrement(roles_on_node_[node], task.role);
    auto it = bucket_of_.find(task.uid);
    if (it == bucket_of_.end()) return;
    Bucket& b = buckets_[it->second];
    Decrement(b.placed_on, node);
    if (task.status == TaskStatus::kPending) {
      b.AddPending(PendingMember{task.uid, task.resreq, SizeOf(task.resreq)});
    }
  }

 private:
  static void Decrement(std::map<std::string, int>& m, const std::string& key) {
    auto it = m.find(key);
    if (it == m.end()) return;
    if (--it->second <= 0) m.erase(it);
  }

  Bucket& NewBucket() {
    Bucket b;
    b.index = int(buckets_.size());
    buckets_.push_back(std::move(b));
    return buckets_.back();
  }

  void Mark(const std::string& role, int strength) {
    int& s = strength_[role];
    s = std::max(s, strength);
  }

  void Relate(const std::vector<std::vector<std::string>>& groups, int sign, int self_strength,
              int inter_strength) {
    for (const auto& g : groups) {
      if (g.size() == 1) {
        relation_[{g[0], g[0]}] = sign;
        Mark(g[0], self_strength);
        continue;
      }
      for (size_t i = 0; i < g.size(); ++i) {
        Mark(g[i], inter_strength);
        for (size_t j = 0; j < g.size(); ++j) {
          if (i != j) relation_[{g[i], g[j]}] = sign;
        }
      }
    }
  }

  std::map<std::pair<std::string, std::string>, int> relation_;
  std::map<std::string, int> rank_;
  int unlisted_rank_ = 0;
  std::map<std::string, int> strength_;  // roles with any (anti-)affinity
  std::vector<Bucket> buckets_;
  std::map<std::string, int> bucket_of_;                             // task uid -> bucket index
  std::map<std::string, std::map<std::string, int>> roles_on_node_;  // node -> role -> pods
  int max_bucket_size_ = 0;
};

std::optional<std::string_view> AnnotationOf(const JobInfo& job, std::string_view key) {
  auto it = job.task_topology_annotations.find(std::string(key));
  if (it == job.task_topology_annotations.end()) return std::nullopt;
  return std::string_view(it->second);
}

class TaskTopologyPlugin final : public Plugin {
 public:
  explicit TaskTopologyPlugin(int64_t weight) : weight_(weight) {}

  std::string_view Name() const override { return kTaskTopologyPluginName; }

  void OnSessionOpen(Session& ssn) override {
    for (auto& [id, job] : ssn.jobs()) {
      if (job.task_topology_annotations.empty()) continue;
      if (job.TaskCount(TaskStatus::kPending) == 0) continue;  // nothing to place
      std::set<std::string> roles;
      for (const auto& [uid, t] : job.tasks()) {
        if (!t.role.empty()) roles.insert(t.role);
      }
      checked_.insert(id);
      std::optional<api::TaskTopologyParse> parsed =
          api::ParseTaskTopology(AnnotationOf(job, api::kTaskTopologyAffinityKey),
                                 AnnotationOf(job, api::kTaskTopologyAntiAffinityKey),
                                 AnnotationOf(job, api::kTaskTopologyTaskOrderKey),
                                 std::vector<std::string>(roles.begin(), roles.end()));
      if (!parsed.has_value()) continue;
      if (!parsed->errors.empty()) {
        std::vector<std::string> messages;
        for (const auto& e : parsed->errors) messages.push_back(e.ToString());
        invalid_[id] = fmt::format("{}; the job is scheduled without its task topology",
                                   fmt::join(messages, "; "));
        continue;
      }
      auto [it, inserted] = jobs_.try_emplace(id, parsed->topology);
      it->second.BuildBuckets(job);
    }
    if (jobs_.empty()) return;  // nothing to order or score: register nothing, cost nothing

    ssn.AddTaskOrderFn(Name(),
                       [this](const TaskInfo& l, const TaskInfo& r) { return TaskOrder(l, r); });
    if (weight_ != 0) {
      ssn.AddNodeOrderFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
        return NodeScore(task, node);
      });
      // The nodes holding members of the task's bucket score highest: a sampled predicate pass
      // must not miss them.
      ssn.AddPreferredNodesFn(Name(),
                              [this](const TaskInfo& task) { return PreferredNodes(task); });
    }
    // The session clears a task's node before the deallocate event, so the node each placement
    // was counted on is remembered here.
    ssn.AddEventHandler(EventHandler{[this](const TaskInfo& t) {
                                       auto job = jobs_.find(t.job_id);
                                       if (job == jobs_.end() || t.node_name.empty()) return;
                                       counted_on_[t.uid] = t.node_name;
                                       job->second.Placed(t, t.node_name);
                                     },
                                     [this](const TaskInfo& t) {
                                       auto job = jobs_.find(t.job_id);
                                       if (job == jobs_.end()) return;
                                       std::string node = t.node_name;
                                       if (auto it = counted_on_.find(t.uid);
                                           it != counted_on_.end()) {
                                         node = it->second;
                                         counted_on_.erase(it);
                                       }
                                       if (!node.empty()) job->second.Unplaced(t, node);
                                     }});
  }

  void OnSessionClose(Session& ssn) override {
    for (auto& [id, job] : ssn.jobs()) {
      auto bad = invalid_.find(id);
      if (bad == invalid_.end()) {
        // Fixed (or removed) since: the explanation goes too. A job not looked at this session
        // (nothing pending) keeps what it was told.
        if (!job.task_topology_annotations.empty() && checked_.count(id) == 0) continue;
        std::erase_if(job.podgroup_status.conditions,
                      [](const PodGroupCondition& c) { return c.type == kConditionTaskTopology; });
        continue;
      }
      PodGroupCondition cond{std::string(kConditionTaskTopology),     "False",     ssn.uid(),
                             std::string(kReasonInvalidTaskTopology), bad->second, ssn.now()};
      const PodGroupCondition* had = job.podgroup_status.FindCondition(cond.type);
      if (had != nullptr && had->SameAs(cond)) continue;  // said already
      job.podgroup_status.SetCondition(std::move(cond));
      ssn.RecordEvent(EventRecord{"PodGroup", job.namespace_name, job.name, "Warning",
                                  "InvalidTaskTopology", bad->second});
    }
  }

 private:
  int TaskOrder(const TaskInfo& l, const TaskInfo& r) const {
    if (l.job_id != r.job_id) return 0;  // ordering jobs is not this plugin's business
    auto it = jobs_.find(l.job_id);
    if (it == jobs_.end()) return 0;
    const JobTopology& topo = it->second;
    if (int a = topo.Rank(l.role), b = topo.Rank(r.role); a != b) return a < b ? -1 : 1;
    const Bucket* lb = topo.BucketOf(l.uid);
    const Bucket* rb = topo.BucketOf(r.uid);
    if ((lb == nullptr) != (rb == nullptr)) return lb != nullptr ? -1 : 1;
    if (lb == nullptr) return 0;
    if (lb->size_at_open != rb->size_at_open) return lb->size_at_open > rb->size_at_open ? -1 : 1;
    if (lb->index != rb->index) return lb->index < rb->index ? -1 : 1;
    if (int a = topo.Strength(l.role), b = topo.Strength(r.role); a != b) return a > b ? -1 : 1;
    return 0;
  }

  std::vector<std::string> PreferredNodes(const TaskInfo& task) const {
    std::vector<std::string> out;
    auto it = jobs_.find(task.job_id);
    if (it == jobs_.end()) return out;
    const Bucket* bucket = it->second.BucketOf(task.uid);
    if (bucket == nullptr) return out;
    out.reserve(bucket->placed_on.size());
    for (const auto& [node, members] : bucket->placed_on) out.push_back(node);
    return out;
  }

  double NodeScore(const TaskInfo& task, const NodeInfo& node) const {
    // The actions score one task over many nodes in a row: look its job and bucket up once.
    // (Buckets are built at open and never move.)
    if (last_task_ != &task || last_uid_ != task.uid) {
      last_task_ = &task;
      last_uid_ = task.uid;
      last_topo_ = nullptr;
      last_bucket_ = nullptr;
      if (auto it = jobs_.find(task.job_id); it != jobs_.end()) {
        last_topo_ = &it->second;
        last_bucket_ = it->second.BucketOf(task.uid);
      }
    }
    if (last_bucket_ == nullptr || last_topo_->max_bucket_size() == 0) return 0;
    const double score = last_topo_->Score(task, *last_bucket_, node);
    return score * static_cast<double>(weight_) * 100.0 /
           static_cast<double>(last_topo_->max_bucket_size());
  }

  const int64_t weight_;
  // NodeScore's one-entry lookup cache.
  mutable const TaskInfo* last_task_ = nullptr;
  mutable std::string last_uid_;
  mutable const JobTopology* last_topo_ = nullptr;
  mutable const Bucket* last_bucket_ = nullptr;
  std::map<std::string, JobTopology> jobs_;        // job uid -> its valid topology
  std::map<std::string, std::string> invalid_;     // job uid -> why its annotations are refused
  std::map<std::string, std::string> counted_on_;  // task uid -> node its placement counts on
  std::set<std::string> checked_;                  // jobs whose annotations were read this session
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewTaskTopologyPlugin(const Arguments& args) {
  absl::StatusOr<int64_t> weight = args.GetInt("task-topology.weight", 1);
  if (!weight.ok()) return weight.status();
  if (*weight < 0) {
    return absl::InvalidArgumentError(fmt::format(
        "task-topology.weight must not be negative (0 turns node scoring off), got {}", *weight));
  }
  return std::make_unique<TaskTopologyPlugin>(*weight);
}

}  // namespace basalt::sched
