// Session, part 1: opening a session, plugin registration per extension point, and the
// dispatchers that walk the tiers and combine the plugins' answers (the rules in session.h).
// Job and task state changes and close (status writes) are in session_state.cc.
#include "scheduler/framework/session.h"

#include <algorithm>
#include <set>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/api/feasibility.h"

namespace basalt::sched {

std::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
  }
  return "Unknown";
}

std::string Outcome::Message() const {
  std::string out;
  for (const auto& r : reasons_) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

Session::Session(ClusterInfo cluster, SchedulerConfig config, SessionOptions options)
    : cluster_(std::move(cluster)), config_(std::move(config)), options_(std::move(options)) {}

Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Open(ClusterInfo cluster,
                                                       const SchedulerConfig& config,
                                                       const PluginRegistry& registry,
                                                       SessionOptions options) {
  std::unique_ptr<Session> ssn(new Session(std::move(cluster), config, std::move(options)));
  for (auto& [name, node] : ssn->nodes()) {
    ssn->total_resource_ += node.allocatable();
    ssn->node_list_.push_back(&node);
  }
  for (const auto& [id, job] : ssn->jobs()) ssn->old_status_[id] = job.podgroup_status;
  // Before the plugins open, so that their shares leave out what can never be placed.
  const ClusterLimits limits = ComputeClusterLimits(ssn->nodes());
  for (auto& [id, job] : ssn->jobs()) MarkNeverFits(job, limits, ssn->FindQueue(job.queue));
  for (const auto& tier : config.tiers) {
    for (const auto& option : tier.plugins) {
      const PluginFactory* factory = registry.Find(option.name);
      if (factory == nullptr) {
        return absl::InvalidArgumentError(fmt::format("unknown plugin \"{}\"", option.name));
      }
      auto plugin = (*factory)(option.arguments);
      if (!plugin.ok()) {
        return absl::InvalidArgumentError(
            fmt::format("plugin {}: {}", option.name, MessageOf(plugin.status())));
      }
      ssn->plugins_.push_back(*std::move(plugin));
    }
  }
  // Open only after all plugins were built, so a bad config never half-opens a session.
  ssn->opened_at_ = std::chrono::steady_clock::now();
  for (auto& plugin : ssn->plugins_) {
    const auto start = std::chrono::steady_clock::now();
    plugin->OnSessionOpen(*ssn);
    if (ssn->options_.report != nullptr) {
      ssn->options_.report->plugins.push_back(CycleReport::PluginTiming{
          std::string(plugin->Name()), true, std::chrono::steady_clock::now() - start});
    }
  }
  ssn->PlanAll();
  return ssn;
}

// ---------------------------------------------------------------------------------------------
// Registration

template <typename Fn>
void Session::Register(Extension<Fn>& ext, std::string_view plugin, Fn fn) {
  ext.fns[std::string(plugin)] = std::move(fn);
  if (opened_) Plan(ext);  // registered after open: keep the plan in step
}

template <typename Fn>
void Session::Plan(Extension<Fn>& ext) {
  ext.plan.clear();
  if (ext.fns.empty()) return;
  for (const auto& tier : config_.tiers) {
    std::vector<const Fn*> fns;
    for (const auto& option : tier.plugins) {
      if (!ext.flag.empty() && !option.Enabled(ext.flag)) continue;
      auto it = ext.fns.find(option.name);
      if (it != ext.fns.end()) fns.push_back(&it->second);
    }
    ext.plan.push_back(std::move(fns));
  }
}

void Session::PlanAll() {
  Plan(job_order_);
  Plan(task_order_);
  Plan(queue_order_);
  Plan(predicate_);
  Plan(node_order_);
  Plan(batch_node_order_);
  Plan(job_valid_);
  Plan(job_ready_);
  Plan(job_pipelined_);
  Plan(job_starving_);
  Plan(job_enqueueable_);
  Plan(job_enqueued_);
  Plan(allocatable_);
  Plan(overused_);
  Plan(preemptive_);
  Plan(preemptable_);
  Plan(reclaimable_);
  Plan(job_domains_);
  Plan(sub_group_domains_);
  Plan(preferred_nodes_);
  Plan(queue_headroom_);
  opened_ = true;
}

#define BASALT_SESSION_ADD_FN(Method, Type, member)        \
  void Session::Method(std::string_view plugin, Type fn) { \
    Register(member, plugin, std::move(fn));               \
  }
BASALT_SESSION_ADD_FN(AddJobOrderFn, JobOrderFn, job_order_)
BASALT_SESSION_ADD_FN(AddTaskOrderFn, TaskOrderFn, task_order_)
BASALT_SESSION_ADD_FN(AddQueueOrderFn, QueueOrderFn, queue_order_)
BASALT_SESSION_ADD_FN(AddPredicateFn, PredicateFn, predicate_)
BASALT_SESSION_ADD_FN(AddNodeOrderFn, NodeOrderFn, node_order_)
BASALT_SESSION_ADD_FN(AddBatchNodeOrderFn, BatchNodeOrderFn, batch_node_order_)
BASALT_SESSION_ADD_FN(AddJobValidFn, JobValidFn, job_valid_)
BASALT_SESSION_ADD_FN(AddJobReadyFn, JobPredicateFn, job_ready_)
BASALT_SESSION_ADD_FN(AddJobPipelinedFn, JobVoteFn, job_pipelined_)
BASALT_SESSION_ADD_FN(AddJobStarvingFn, JobPredicateFn, job_starving_)
BASALT_SESSION_ADD_FN(AddJobEnqueueableFn, JobVoteFn, job_enqueueable_)
BASALT_SESSION_ADD_FN(AddJobEnqueuedFn, JobEnqueuedFn, job_enqueued_)
BASALT_SESSION_ADD_FN(AddAllocatableFn, AllocatableFn, allocatable_)
BASALT_SESSION_ADD_FN(AddOverusedFn, OverusedFn, overused_)
BASALT_SESSION_ADD_FN(AddPreemptiveFn, PreemptiveFn, preemptive_)
BASALT_SESSION_ADD_FN(AddPreemptableFn, EvictableFn, preemptable_)
BASALT_SESSION_ADD_FN(AddReclaimableFn, EvictableFn, reclaimable_)
BASALT_SESSION_ADD_FN(AddJobDomainsFn, JobDomainsFn, job_domains_)
BASALT_SESSION_ADD_FN(AddSubGroupDomainsFn, SubGroupDomainsFn, sub_group_domains_)
BASALT_SESSION_ADD_FN(AddPreferredNodesFn, PreferredNodesFn, preferred_nodes_)
BASALT_SESSION_ADD_FN(AddQueueHeadroomFn, QueueHeadroomFn, queue_headroom_)
#undef BASALT_SESSION_ADD_FN

void Session::AddEventHandler(EventHandler handler) {
  event_handlers_.push_back(std::move(handler));
}

// ---------------------------------------------------------------------------------------------
// Dispatch

template <typename Fn, typename Visit, typename TierEnd>
void Session::ForEach(const Extension<Fn>& ext, Visit visit, TierEnd tier_end) {
  for (const auto& tier : ext.plan) {
    for (const Fn* fn : tier) {
      if (!visit(*fn)) return;
    }
    if (!tier_end()) return;
  }
}

template <typename Fn, typename T>
int Session::CompareBy(const Extension<Fn>& ext, const T& l, const T& r) {
  int result = 0;
  ForEach(
      ext,
      [&](const Fn& fn) {
        result = fn(l, r);
        return result == 0;
      },
      [] { return true; });
  return result;
}

bool Session::JobOrder(const JobInfo& l, const JobInfo& r) const {
  if (int c = CompareBy(job_order_, l, r); c != 0) return c < 0;
  if (l.creation_time != r.creation_time) return l.creation_time < r.creation_time;
  return l.uid < r.uid;
}

bool Session::TaskOrder(const TaskInfo& l, const TaskInfo& r) const {
  if (int c = CompareBy(task_order_, l, r); c != 0) return c < 0;
  int64_t li = PodNameIndex(l.name);
  int64_t ri = PodNameIndex(r.name);
  if (li >= 0 && ri >= 0 && li != ri) return li < ri;
  if (l.creation_time != r.creation_time) return l.creation_time < r.creation_time;
  return l.uid < r.uid;
}

bool Session::QueueOrder(const QueueInfo& l, const QueueInfo& r) const {
  if (int c = CompareBy(queue_order_, l, r); c != 0) return c < 0;
  if (l.creation_time != r.creation_time) return l.creation_time < r.creation_time;
  return l.name < r.name;
}

Outcome Session::Predicate(const TaskInfo& task, const NodeInfo& node) const {
  Outcome out;
  ForEach(
      predicate_,
      [&](const PredicateFn& fn) {
        out = fn(task, node);
        return out.ok();
      },
      [] { return true; });
  return out;
}

double Session::NodeOrder(const TaskInfo& task, const NodeInfo& node) const {
  double sum = 0;
  ForEach(
      node_order_,
      [&](const NodeOrderFn& fn) {
        sum += fn(task, node);
        return true;
      },
      [] { return true; });
  return sum;
}

std::vector<double> Session::BatchNodeOrder(const TaskInfo& task,
                                            const std::vector<const NodeInfo*>& nodes) const {
  std::vector<double> sum(nodes.size(), 0.0);
  ForEach(
      batch_node_order_,
      [&](const BatchNodeOrderFn& fn) {
        std::vector<double> scores = fn(task, nodes);
        for (size_t i = 0; i < sum.size() && i < scores.size(); ++i) sum[i] += scores[i];
        return true;
      },
      [] { return true; });
  return sum;
}

std::optional<ValidateResult> Session::JobValid(const JobInfo& job) const {
  std::optional<ValidateResult> out;
  ForEach(
      job_valid_,
      [&](const JobValidFn& fn) {
        out = fn(job);
        return !out.has_value();
      },
      [] { return true; });
  return out;
}

bool Session::JobReady(const JobInfo& job) const {
  bool ready = true;
  ForEach(
      job_ready_,
      [&](const JobPredicateFn& fn) {
        ready = fn(job);
        return ready;
      },
      [] { return true; });
  return ready;
}

bool Session::Vote(const Extension<JobVoteFn>& ext, const JobInfo& job) {
  bool rejected = false;
  bool permitted = false;
  ForEach(
      ext,
      [&](const JobVoteFn& fn) {
        int v = fn(job);
        if (v < 0) rejected = true;
        if (v > 0) permitted = true;
        return !rejected;
      },
      [&] { return !permitted; });
  if (rejected) return false;
  return true;  // a Permit, or no decision at all
}

bool Session::JobPipelined(const JobInfo& job) const { return Vote(job_pipelined_, job); }

bool Session::JobEnqueueable(const JobInfo& job) const { return Vote(job_enqueueable_, job); }

bool Session::JobStarving(const JobInfo& job) const {
  bool found = false;
  bool starving = true;
  ForEach(
      job_starving_,
      [&](const JobPredicateFn& fn) {
        found = true;
        starving = starving && fn(job);
        return true;
      },
      [&] { return !found; });
  return found && starving;
}

void Session::JobEnqueued(const JobInfo& job) {
  ForEach(
      job_enqueued_,
      [&](const JobEnqueuedFn& fn) {
        fn(job);
        return true;
      },
      [] { return true; });
}

bool Session::Allocatable(const QueueInfo& queue, const TaskInfo& task) const {
  bool ok = true;
  ForEach(
      allocatable_,
      [&](const AllocatableFn& fn) {
        ok = fn(queue, task);
        return ok;
      },
      [] { return true; });
  return ok;
}

bool Session::Overused(const QueueInfo& queue) const {
  bool overused = false;
  ForEach(
      overused_,
      [&](const OverusedFn& fn) {
        overused = fn(queue);
        return !overused;
      },
      [] { return true; });
  return overused;
}

std::optional<Resource> Session::QueueHeadroom(const QueueInfo& queue) const {
  std::optional<Resource> headroom;
  ForEach(
      queue_headroom_,
      [&](const QueueHeadroomFn& fn) {
        std::optional<Resource> h = fn(queue);
        if (!h.has_value()) return true;
        if (!headroom.has_value()) {
          headroom = std::move(h);
          return true;
        }
        Resource both = headroom->Min(*h, MissingAs::kInfinity);
        for (const auto& [name, v] : h->scalars()) {
          if (!headroom->Has(name)) both.Set(name, v);  // absent = unlimited
        }
        headroom = std::move(both);
        return true;
      },
      [] { return true; });
  return headroom;
}

bool Session::Preemptive(const QueueInfo& queue, const TaskInfo& task) const {
  bool ok = true;
  ForEach(
      preemptive_,
      [&](const PreemptiveFn& fn) {
        ok = fn(queue, task);
        return ok;
      },
      [] { return true; });
  return ok;
}

std::vector<const TaskInfo*> Session::Evictable(const Extension<EvictableFn>& ext,
                                                const TaskInfo& preemptor,
                                                const std::vector<const TaskInfo*>& candidates,
                                                std::string_view permit_all) {
  const EvictableFn* permitted = nullptr;
  if (!permit_all.empty()) {
    if (auto it = ext.fns.find(permit_all); it != ext.fns.end()) permitted = &it->second;
  }
  std::optional<std::vector<const TaskInfo*>> tier_result;
  std::vector<const TaskInfo*> winner;
  bool tier_failed = false;
  ForEach(
      ext,
      [&](const EvictableFn& fn) {
        if (tier_failed) return true;
        auto victims = &fn == permitted ? std::optional(candidates) : fn(preemptor, candidates);
        if (!victims.has_value()) return true;  // abstain
        if (!tier_result.has_value()) {
          tier_result = *std::move(victims);
        } else {
          std::vector<const TaskInfo*> both;
          for (const TaskInfo* t : *tier_result) {
            if (std::find(victims->begin(), victims->end(), t) != victims->end()) both.push_back(t);
          }
          tier_result = std::move(both);
        }
        if (tier_result->empty()) tier_failed = true;
        return true;
      },
      [&] {
        if (!tier_failed && tier_result.has_value() && !tier_result->empty()) {
          winner = *tier_result;
          return false;
        }
        tier_result.reset();
        tier_failed = false;
        return true;
      });
  return winner;
}

std::optional<JobDomains> Session::JobDomainsFor(const JobInfo& job) const {
  std::optional<JobDomains> out;
  ForEach(
      job_domains_,
      [&](const JobDomainsFn& fn) {
        out = fn(job);
        return !out.has_value();
      },
      [] { return true; });
  return out;
}

std::optional<JobDomains> Session::SubGroupDomainsFor(const JobInfo& job, const SubGroup& group,
                                                      const NodeDomain* bound) const {
  std::optional<JobDomains> out;
  ForEach(
      sub_group_domains_,
      [&](const SubGroupDomainsFn& fn) {
        out = fn(job, group, bound);
        return !out.has_value();
      },
      [] { return true; });
  return out;
}

std::vector<NodeInfo*> Session::PreferredNodes(const TaskInfo& task) const {
  std::set<std::string> names;
  ForEach(
      preferred_nodes_,
      [&](const PreferredNodesFn& fn) {
        for (std::string& name : fn(task)) names.insert(std::move(name));
        return true;
      },
      [] { return true; });
  std::vector<NodeInfo*> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    // The session's nodes are its own (the const here is the dispatch's, not the nodes').
    if (NodeInfo* node = const_cast<ClusterInfo&>(cluster_).FindNode(name); node != nullptr) {
      out.push_back(node);
    }
  }
  return out;
}

std::vector<const TaskInfo*> Session::Preemptable(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const {
  return Evictable(preemptable_, preemptor, candidates);
}

std::vector<const TaskInfo*> Session::Reclaimable(
    const TaskInfo& reclaimer, const std::vector<const TaskInfo*>& candidates) const {
  return Evictable(reclaimable_, reclaimer, candidates);
}

std::vector<const TaskInfo*> Session::GangPreemptable(
    const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates) const {
  return Evictable(preemptable_, preemptor, candidates, "gang");
}

std::vector<const TaskInfo*> Session::GangReclaimable(
    const TaskInfo& reclaimer, const std::vector<const TaskInfo*>& candidates) const {
  return Evictable(reclaimable_, reclaimer, candidates, "gang");
}

}  // namespace basalt::sched
