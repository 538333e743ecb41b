#include "scheduler/plugins/network_topology/network_topology.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "fmt/format.h"
#include "scheduler/api/hypernode.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

constexpr int32_t kAnyTier = std::numeric_limits<int32_t>::max();

// "nvidia.com/gpu 8" -> {"nvidia.com/gpu", "8"}: one dimension as Resource::ToString prints it.
std::pair<std::string, std::string> Dimension(std::string_view name, int64_t value) {
  Resource one;
  one.Set(name, value);
  const std::string text = one.ToString();
  const size_t space = text.rfind(' ');
  if (space == std::string::npos) return {std::string(name), text};
  return {text.substr(0, space), text.substr(space + 1)};
}

// What the rest of the gang needs at least: the smallest pending request per dimension times
// the tasks still missing for minAvailable (at least one).
Resource GangNeed(const JobInfo& job) {
  std::optional<Resource> unit;
  for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
    if (t->BestEffort()) continue;
    unit = unit.has_value() ? unit->Min(t->init_resreq, MissingAs::kZero) : t->init_resreq;
  }
  if (!unit.has_value()) return Resource();
  const int placed = job.ReadyTaskNum() + job.WaitingTaskNum();
  const int missing = std::max(1, job.min_available - placed);
  return unit->Scale(missing, 1);
}

// What a sub-group still needs: its smallest pending request times its missing tasks.
Resource GroupNeed(const SubGroup& group) {
  std::optional<Resource> unit;
  for (const TaskInfo* t : group.tasks) {
    if (t->status != TaskStatus::kPending || t->BestEffort()) continue;
    unit = unit.has_value() ? unit->Min(t->init_resreq, MissingAs::kZero) : t->init_resreq;
  }
  if (!unit.has_value()) return Resource();
  const int missing = std::max(1, group.size - group.ready - group.waiting);
  return unit->Scale(missing, 1);
}

bool IsPlaced(const TaskInfo& t) {
  return (IsAllocatedStatus(t.status) || t.status == TaskStatus::kPipelined) &&
         !t.node_name.empty();
}

class NetworkTopologyPlugin final : public Plugin {
 public:
  explicit NetworkTopologyPlugin(double weight) : weight_(weight) {}
  std::string_view Name() const override { return kNetworkTopologyPluginName; }

  void OnSessionOpen(Session& ssn) override {
    ssn_ = &ssn;
    tree_ = HyperNodeTree::Build(ssn.cluster().hypernodes(), ssn.nodes());
    const size_t n = tree_.domains().size();
    domain_nodes_.assign(n, {});
    idle_.assign(n, Resource());
    allocatable_.assign(n, Resource());
    dirty_.assign(n, true);
    domains_of_node_.clear();
    for (size_t i = 0; i < n; ++i) {
      const HyperNodeTree::Domain& d = tree_.domains()[i];
      for (const std::string& name : d.nodes) {
        NodeInfo* node = ssn.FindNode(name);
        if (node == nullptr) continue;
        domain_nodes_[i].push_back(node);
        allocatable_[i] += node->allocatable();
        domains_of_node_[name].push_back(i);  // in tier order, as the domains are
      }
    }
    max_tier_ = tree_.empty() ? 0 : tree_.domains().back().tier;
    // Without HyperNodes jobs with networkTopology are still answered (hard ones wait, saying
    // so); only the node order and the idle bookkeeping are left out.
    ssn.AddJobDomainsFn(Name(), [this](const JobInfo& job) { return Domains(job); });
    ssn.AddSubGroupDomainsFn(
        Name(), [this](const JobInfo& job, const SubGroup& group, const NodeDomain* bound) {
          return SubGroupDomains(job, group, bound);
        });
    if (tree_.empty()) return;
    ssn.AddBatchNodeOrderFn(
        Name(), [this](const TaskInfo& task, const std::vector<const NodeInfo*>& nodes) {
          return Scores(task, nodes);
        });
    auto touch = [this](const TaskInfo& task) {
      const std::string& node = !task.node_name.empty() ? task.node_name
                                : task.last_transaction.has_value()
                                    ? task.last_transaction->node_name
                                    : task.node_name;
      auto it = domains_of_node_.find(node);
      if (it == domains_of_node_.end()) {
        if (node.empty()) dirty_.assign(dirty_.size(), true);
        return;
      }
      for (size_t i : it->second) dirty_[i] = true;
    };
    ssn.AddEventHandler(EventHandler{.on_allocate = touch, .on_deallocate = touch});
  }

 private:
  struct Candidate {
    size_t index;     // into tree_.domains()
    double leftover;  // free share of the domain after the gang (binpack: smaller first)
  };

  // Idle resources of domain `i`, summed again only after a task moved on one of its nodes.
  const Resource& Idle(size_t i) const {
    if (dirty_[i]) {
      Resource idle;
      for (const NodeInfo* n : domain_nodes_[i]) idle += n->idle();
      idle_[i] = std::move(idle);
      dirty_[i] = false;
    }
    return idle_[i];
  }

  static std::set<std::string> PlacedNodes(const JobInfo& job) {
    std::set<std::string> placed;
    for (const auto& [uid, t] : job.tasks()) {
      if (IsPlaced(t)) placed.insert(t.node_name);
    }
    return placed;
  }

  // Nodes closer to where the job's tasks already are score higher: weight x 100 when a task
  // of the job is in the node's tier-1 HyperNode, less the higher the lowest HyperNode that
  // holds both, 0 when none does (Volcano's LCA-tier score). Jobs without networkTopology: 0.
  std::vector<double> Scores(const TaskInfo& task,
                             const std::vector<const NodeInfo*>& nodes) const {
    std::vector<double> out(nodes.size(), 0.0);
    const JobInfo* job = ssn_->FindJob(task.job_id);
    if (job == nullptr) return out;
    // A task of a sub-group with its own networkTopology is drawn to its sub-group's tasks,
    // not to the rest of the job (the other sub-groups may be elsewhere on purpose).
    size_t policy = 0;
    std::optional<std::string> group =
        job->sub_group_policies.empty() ? std::nullopt : job->SubGroupOf(task, &policy);
    const bool group_topology =
        group.has_value() && job->sub_group_policies[policy].network_topology.has_value();
    if (!group_topology && !job->network_topology.has_value()) return out;
    std::set<std::string> placed;
    if (group_topology) {
      for (const auto& [uid, t] : job->tasks()) {
        if (IsPlaced(t) && job->SubGroupOf(t, nullptr) == group) placed.insert(t.node_name);
      }
    } else {
      placed = PlacedNodes(*job);
    }
    if (placed.empty()) return out;
    for (size_t i = 0; i < nodes.size(); ++i) {
      auto it = domains_of_node_.find(nodes[i]->name());
      if (it == domains_of_node_.end()) continue;
      for (size_t d : it->second) {
        const std::vector<std::string>& members = tree_.domains()[d].nodes;
        const bool shares = std::any_of(placed.begin(), placed.end(), [&](const std::string& n) {
          return std::binary_search(members.begin(), members.end(), n);
        });
        if (!shares) continue;
        out[i] = weight_ * 100.0 * static_cast<double>(max_tier_ + 1 - tree_.domains()[d].tier) /
                 static_cast<double>(max_tier_);
        break;  // the lowest tier that holds both
      }
    }
    return out;
  }

  std::optional<JobDomains> Domains(const JobInfo& job) const {
    if (!job.network_topology.has_value()) return std::nullopt;
    return DomainsFor(*job.network_topology, PlacedNodes(job), GangNeed(job), nullptr);
  }

  // A sub-group's own networkTopology, inside `bound` (the job's domain) when given.
  std::optional<JobDomains> SubGroupDomains(const JobInfo& job, const SubGroup& group,
                                            const NodeDomain* bound) const {
    const SubGroupPolicy& policy = job.sub_group_policies.at(group.policy);
    if (!policy.network_topology.has_value()) return std::nullopt;
    std::set<std::string> placed;
    for (const TaskInfo* t : group.tasks) {
      if (IsPlaced(*t)) placed.insert(t->node_name);
    }
    return DomainsFor(*policy.network_topology, placed, GroupNeed(group), bound);
  }

  // Every node of `d` is one of `bound`'s (null: no bound).
  static bool Within(const HyperNodeTree::Domain& d, const NodeDomain* bound) {
    if (bound == nullptr) return true;
    return std::all_of(d.nodes.begin(), d.nodes.end(), [bound](const std::string& n) {
      return std::binary_search(bound->nodes.begin(), bound->nodes.end(), n,
                                [](const auto& a, const auto& b) { return NameOf(a) < NameOf(b); });
    });
  }
  static std::string_view NameOf(const std::string& s) { return s; }
  static std::string_view NameOf(const NodeInfo* n) { return n->name(); }

  // The domains a gang (or sub-group) needing `need`, with tasks already on `placed`, may use
  // under `nt`, inside `bound`; `unsatisfied` says why none would do.
  std::optional<JobDomains> DomainsFor(const NetworkTopologyConstraint& nt,
                                       const std::set<std::string>& placed, const Resource& need,
                                       const NodeDomain* bound) const {
    int32_t max_tier = kAnyTier;
    std::string tier_text;
    if (nt.highest_tier.has_value()) {
      max_tier = *nt.highest_tier;
      tier_text = fmt::format(" tier {}", max_tier);
    } else if (!nt.highest_tier_name.empty()) {
      std::optional<int32_t> t = tree_.TierOfName(nt.highest_tier_name);
      if (!t.has_value()) {
        if (!nt.hard) return std::nullopt;
        return JobDomains{{},
                          fmt::format("hard tier {}: no HyperNode has tierName {}",
                                      nt.highest_tier_name, nt.highest_tier_name)};
      }
      max_tier = *t;
      tier_text = fmt::format(" tier {} ({})", max_tier, nt.highest_tier_name);
    }
    const std::string mode = nt.hard ? "hard" : "soft";
    const std::string scope = max_tier == kAnyTier
                                  ? std::string("no HyperNode")
                                  : fmt::format("no HyperNode of tier ≤ {}", max_tier);

    // Nodes already holding tasks of the gang (`placed`): it stays where it started.
    const std::vector<std::string> dims = need.Names();

    std::vector<Candidate> candidates;
    int in_scope = 0;
    const HyperNodeTree::Domain* best = nullptr;
    double best_ratio = -1;
    std::string best_dim;
    int64_t best_have = 0, best_want = 0;
    for (size_t i = 0; i < tree_.domains().size(); ++i) {
      const HyperNodeTree::Domain& d = tree_.domains()[i];
      if (d.tier > max_tier) break;
      const bool holds_placed = std::all_of(placed.begin(), placed.end(), [&](const auto& n) {
        return std::binary_search(d.nodes.begin(), d.nodes.end(), n);
      });
      if (!holds_placed || !Within(d, bound)) continue;
      ++in_scope;
      const Resource& idle = Idle(i);
      const Resource& allocatable = allocatable_[i];
      // For eviction: whether the domain could hold the need once victims are gone.
      const Resource& fit = ssn_->domains_by_capacity() ? allocatable : idle;
      // The dimension in which the domain is shortest of what the gang needs.
      double ratio = std::numeric_limits<double>::infinity();
      std::string short_dim;
      double leftover = 0;
      for (const std::string& dim : dims) {
        const double want = static_cast<double>(need.Get(dim));
        const double have = static_cast<double>(idle.Get(dim));
        const double room = static_cast<double>(fit.Get(dim));
        if (room / want < ratio) {
          ratio = room / want;
          short_dim = dim;
        }
        const double total = static_cast<double>(allocatable.Get(dim));
        if (total > 0) leftover += (have - want) / total;
      }
      if (ratio >= 1) {
        candidates.push_back({i, leftover});
      } else if (ratio > best_ratio) {
        best_ratio = ratio;
        best = &d;
        best_dim = short_dim;
        best_have = fit.Get(short_dim);
        best_want = need.Get(short_dim);
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [this](const Candidate& a, const Candidate& b) {
                       const auto& da = tree_.domains()[a.index];
                       const auto& db = tree_.domains()[b.index];
                       if (da.tier != db.tier) return da.tier < db.tier;
                       // Eviction: the most idle first (fewest victims); else binpack.
                       if (ssn_->domains_by_capacity()) return a.leftover > b.leftover;
                       return a.leftover < b.leftover;
                     });

    JobDomains out;
    for (const Candidate& c : candidates) {
      const HyperNodeTree::Domain& d = tree_.domains()[c.index];
      out.domains.push_back(NodeDomain{d.name, d.tier, domain_nodes_[c.index]});
    }
    const std::string prefix = mode + tier_text;
    if (in_scope == 0) {
      out.unsatisfied =
          placed.empty() ? fmt::format("{}: {} exists", prefix, scope)
                         : fmt::format("{}: {} holds the {} node(s) the job's tasks already run on",
                                       prefix, scope, placed.size());
    } else if (!candidates.empty()) {
      out.unsatisfied = fmt::format(
          "{}: the gang fits in {}: {} of them have enough free resources in total (first {}) "
          "but not on nodes its tasks can use",
          prefix, scope == "no HyperNode" ? "no HyperNode" : scope, candidates.size(),
          tree_.domains()[candidates.front().index].name);
    } else if (best != nullptr) {
      auto [name, want] = Dimension(best_dim, best_want);
      auto [unused, have] = Dimension(best_dim, best_have);
      out.unsatisfied =
          fmt::format("{}: {} has {} {} {}; best {} has {}", prefix, scope, want,
                      ssn_->domains_by_capacity() ? "allocatable" : "free", name, best->name, have);
    } else {
      out.unsatisfied = fmt::format("{}: {} has room for the gang", prefix, scope);
    }
    if (!nt.hard) {
      // Soft: the whole cluster (or the bound) last, so the gang runs even when no domain
      // holds it.
      out.domains.push_back(bound != nullptr ? NodeDomain{bound->name, kAnyTier, bound->nodes}
                                             : NodeDomain{"cluster", kAnyTier, ssn_->node_list()});
    }
    return out;
  }

  double weight_ = 1;
  int32_t max_tier_ = 0;
  Session* ssn_ = nullptr;
  HyperNodeTree tree_;
  // Aligned with tree_.domains(): the nodes, their allocatable sum, and the idle sum (cached,
  // recomputed when `dirty_`, which the allocate/deallocate handlers set).
  std::vector<std::vector<NodeInfo*>> domain_nodes_;
  std::vector<Resource> allocatable_;
  mutable std::vector<Resource> idle_;
  mutable std::vector<bool> dirty_;
  // Node name -> the domains holding it, lowest tier first.
  std::unordered_map<std::string, std::vector<size_t>> domains_of_node_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewNetworkTopologyPlugin(const Arguments& args) {
  absl::StatusOr<double> weight = args.GetFloat("weight", 1);
  if (!weight.ok()) return weight.status();
  if (*weight < 0) return absl::InvalidArgumentError("weight must be >= 0");
  return std::unique_ptr<Plugin>(new NetworkTopologyPlugin(*weight));
}

}  // namespace basalt::sched
