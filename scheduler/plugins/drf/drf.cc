#include "scheduler/plugins/drf/drf.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "scheduler/conf/config.h"
#include "scheduler/framework/session.h"
#include "scheduler/plugins/drf/hdrf.h"

namespace basalt::sched {

namespace {
double Ratio(int64_t a, int64_t t) {
  if (t == 0) return a == 0 ? 0.0 : 1.0;
  return static_cast<double>(a) / static_cast<double>(t);
}
}  // namespace

double DrfShare(const Resource& allocated, const Resource& total) {
  double share = std::max(Ratio(allocated.milli_cpu(), total.milli_cpu()),
                          Ratio(allocated.memory(), total.memory()));
  for (const auto& [name, t] : total.scalars())
    share = std::max(share, Ratio(allocated.Get(name), t));
  return share;
}

HdrfPath HdrfQueuePath(const Session& ssn, const QueueInfo& queue) {
  if (!queue.hierarchy.empty() && !queue.hierarchy_weights.empty()) {
    return HdrfPathFromAnnotations(queue.hierarchy, queue.hierarchy_weights);
  }
  HdrfPath up;
  std::set<std::string> seen;
  const QueueInfo* q = &queue;
  // A missing parent ends the chain there (as a child of the root); a cycle stops at the queue
  // seen twice. The webhook refuses both; the capacity plugin explains them on the PodGroups.
  while (q != nullptr && q->name != "root" && seen.insert(q->name).second) {
    up.segments.push_back(q->name);
    up.weights.push_back(std::max(1.0, static_cast<double>(q->weight)));
    if (q->parent.empty() || q->parent == "root") break;
    q = ssn.FindQueue(q->parent);
  }
  std::reverse(up.segments.begin(), up.segments.end());
  std::reverse(up.weights.begin(), up.weights.end());
  return up;
}

namespace {

constexpr double kShareDelta = 1e-6;

bool HierarchyEnabled(const SchedulerConfig& config) {
  for (const auto& tier : config.tiers) {
    for (const auto& option : tier.plugins) {
      if (option.name == kDrfPluginName) return option.Enabled(flag::kHierarchy);
    }
  }
  return false;
}

class DrfPlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kDrfPluginName; }

  void OnSessionOpen(Session& ssn) override {
    total_ = ssn.total_resource();
    for (const auto& [id, job] : ssn.jobs()) {
      Attr& a = jobs_[id];
      a.allocated = job.allocated();
      a.share = DrfShare(a.allocated, total_);
    }
    if (HierarchyEnabled(ssn.config())) OpenHierarchy(ssn);
    ssn.AddJobOrderFn(Name(), [this](const JobInfo& l, const JobInfo& r) {
      if (tree_.has_value() && tree_->HasJob(l.uid) && tree_->HasJob(r.uid)) {
        return Sign(tree_->Compare(JobPath(l.uid), JobPath(r.uid), true));
      }
      double ls = Share(l.uid);
      double rs = Share(r.uid);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddPreemptableFn(
        Name(),
        [this](const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          if (tree_.has_value() && tree_->HasJob(preemptor.job_id)) {
            return HierarchicalVictims(preemptor, candidates, /*queue_level=*/false);
          }
          Resource preemptor_alloc = jobs_[preemptor.job_id].allocated + preemptor.resreq;
          double preemptor_share = DrfShare(preemptor_alloc, total_);
          std::map<std::string, Resource> victim_alloc;
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* t : candidates) {
            auto [it, inserted] = victim_alloc.emplace(t->job_id, jobs_[t->job_id].allocated);
            Resource after = it->second - t->resreq;
            double victim_share = DrfShare(after, total_);
            if (preemptor_share <= victim_share + kShareDelta) {
              it->second = after;
              victims.push_back(t);
            }
          }
          return victims;
        });
    if (tree_.has_value()) {
      ssn.AddQueueOrderFn(Name(), [this](const QueueInfo& l, const QueueInfo& r) {
        return Sign(tree_->Compare(QueuePath(l.name), QueuePath(r.name), true));
      });
      ssn.AddReclaimableFn(
          Name(),
          [this](const TaskInfo& reclaimer, const std::vector<const TaskInfo*>& candidates)
              -> std::optional<std::vector<const TaskInfo*>> {
            if (!tree_->HasJob(reclaimer.job_id)) return std::nullopt;
            return HierarchicalVictims(reclaimer, candidates, /*queue_level=*/true);
          });
    }
    ssn.AddEventHandler(
        EventHandler{[this](const TaskInfo& t) { Update(t.job_id, t.resreq, +1); },
                     [this](const TaskInfo& t) { Update(t.job_id, t.resreq, -1); }});
  }

  // For the metrics (volcano_job_share): each job's share after the cycle's placements.
  void OnSessionClose(Session& ssn) override {
    for (const auto& [id, a] : jobs_) ssn.ReportJobShare(id, a.share);
  }

 private:
  struct Attr {
    Resource allocated;
    double share = 0;
  };

  static int Sign(double v) { return v < 0 ? -1 : (v > 0 ? 1 : 0); }

  void OpenHierarchy(Session& ssn) {
    tree_.emplace(total_);
    for (const auto& [name, q] : ssn.queues()) queue_paths_[name] = HdrfQueuePath(ssn, q);
    for (const auto& [id, job] : ssn.jobs()) {
      auto it = queue_paths_.find(job.queue);
      if (it == queue_paths_.end()) continue;  // a queue that is gone: flat drf for the job
      tree_->AddJob(id, it->second.segments, it->second.weights, job.allocated(),
                    job.total_request());
      job_queue_[id] = job.queue;
    }
    for (const auto& [id, queue] : job_queue_) job_paths_[id] = tree_->JobPath(id);
  }

  // The tree path of a job known to the tree (cached: job order compares them often).
  const std::vector<std::string>& JobPath(const std::string& job) const {
    static const std::vector<std::string> kNone;
    auto it = job_paths_.find(job);
    return it == job_paths_.end() ? kNone : it->second;
  }

  const std::vector<std::string>& QueuePath(const std::string& queue) const {
    static const std::vector<std::string> kNone;
    auto it = queue_paths_.find(queue);
    return it == queue_paths_.end() ? kNone : it->second.segments;
  }

  // The victims among `candidates` that keep the preemptor's side no higher than the victim's
  // after the move, compared where their paths part (queue paths for reclaim, job paths for
  // preempt) by what the subtrees hold / weight (HdrfTree::CompareHeld), within kShareDelta.
  // Victims of one job or queue accumulate. Deliberately differs from Volcano's reclaim check,
  // which also orders saturated nodes last: a reclaimer that would then hold all it asks for is
  // saturated, so Volcano never takes the last task of a victim job for it; Basalt compares the
  // shares alone. The tree is changed for the simulation and restored exactly (integer leaves,
  // deterministic recomputation).
  std::vector<const TaskInfo*> HierarchicalVictims(const TaskInfo& preemptor,
                                                   const std::vector<const TaskInfo*>& candidates,
                                                   bool queue_level) {
    auto path_of = [&](const std::string& job) {
      if (!queue_level) return JobPath(job);
      auto it = job_queue_.find(job);
      return it == job_queue_.end() ? std::vector<std::string>{} : QueuePath(it->second);
    };
    const std::vector<std::string> mine = path_of(preemptor.job_id);
    tree_->Change(preemptor.job_id, preemptor.resreq, +1);
    std::vector<const TaskInfo*> victims;
    for (const TaskInfo* t : candidates) {
      // A task of the preemptor's own job is never its victim (as in flat drf: the job's share
      // would not drop).
      if (t->job_id == preemptor.job_id || !tree_->HasJob(t->job_id)) continue;
      tree_->Change(t->job_id, t->resreq, -1);
      if (tree_->CompareHeld(mine, path_of(t->job_id)) <= kShareDelta) {
        victims.push_back(t);
      } else {
        tree_->Change(t->job_id, t->resreq, +1);
      }
    }
    for (const TaskInfo* t : victims) tree_->Change(t->job_id, t->resreq, +1);
    tree_->Change(preemptor.job_id, preemptor.resreq, -1);
    return victims;
  }

  double Share(const std::string& job) const {
    auto it = jobs_.find(job);
    return it == jobs_.end() ? 0.0 : it->second.share;
  }
  void Update(const std::string& job, const Resource& req, int sign) {
    Attr& a = jobs_[job];
    if (sign > 0) {
      a.allocated += req;
    } else {
      a.allocated -= req;
    }
    a.share = DrfShare(a.allocated, total_);
    if (tree_.has_value()) tree_->Change(job, req, sign);
  }

  Resource total_;
  std::map<std::string, Attr> jobs_;
  // Hierarchical mode (enableHierarchy) only.
  std::optional<HdrfTree> tree_;
  std::map<std::string, HdrfPath> queue_paths_;
  std::map<std::string, std::string> job_queue_;
  std::map<std::string, std::vector<std::string>> job_paths_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments&) {
  return std::make_unique<DrfPlugin>();
}

}  // namespace basalt::sched
