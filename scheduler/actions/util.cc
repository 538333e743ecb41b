#include "scheduler/actions/util.h"

#include "fmt/format.h"

namespace basalt::sched {

Outcome PredicateForAllocate(const Session& ssn, const TaskInfo& task, const NodeInfo& node) {
  if (auto short_dim = task.init_resreq.FirstInsufficient(node.FutureIdle());
      short_dim.has_value()) {
    return Outcome::Unschedulable("allocate", InsufficientReason(*short_dim));
  }
  return ssn.Predicate(task, node);
}

bool PassesAllocatePredicate(const Session& ssn, const TaskInfo& task, const NodeInfo& node,
                             FitErrors* errors) {
  if (auto short_dim = task.init_resreq.FirstInsufficientName(node.FutureIdle());
      short_dim.has_value()) {
    if (errors != nullptr) errors->SetNodeInsufficient(node.name(), *short_dim);
    return false;
  }
  Outcome o = ssn.Predicate(task, node);
  if (!o.ok() && errors != nullptr) errors->SetNodeError(node.name(), o.reasons());
  return o.ok();
}

std::vector<NodeInfo*> PredicateNodes(const Session& ssn, const TaskInfo& task,
                                      bool check_resources, FitErrors* errors) {
  std::vector<NodeInfo*> feasible;
  for (NodeInfo* node : ssn.node_list()) {
    if (check_resources) {
      if (PassesAllocatePredicate(ssn, task, *node, errors)) feasible.push_back(node);
      continue;
    }
    Outcome o = ssn.Predicate(task, *node);
    if (o.ok()) {
      feasible.push_back(node);
    } else if (errors != nullptr) {
      errors->SetNodeError(node->name(), o.reasons());
    }
  }
  return feasible;
}

std::vector<NodeInfo*> PredicateSampledNodes(const Session& ssn, const TaskInfo& task,
                                             FitErrors* errors) {
  const std::vector<NodeInfo*>& nodes = ssn.node_list();
  const size_t n = nodes.size();
  NodeSampler& sampler = ssn.node_sampler();
  const auto wanted =
      static_cast<size_t>(NumFeasibleNodesToFind(sampler.options(), static_cast<int64_t>(n)));
  const size_t start = sampler.Start(n);
  std::vector<size_t> feasible;
  feasible.reserve(std::min(wanted, n));
  size_t processed = 0;
  for (; processed < n && feasible.size() < wanted; ++processed) {
    const size_t i = (start + processed) % n;
    if (PassesAllocatePredicate(ssn, task, *nodes[i], errors)) feasible.push_back(i);
  }
  sampler.Advance(processed, n);
  std::vector<NodeInfo*> out;
  out.reserve(feasible.size());
  if (processed < n) {
    // A sample: the nodes a plugin prefers for this task are checked too (once each), so that
    // e.g. a worker finds the node its ps runs on however far the rotation is from it.
    for (NodeInfo* node : ssn.PreferredNodes(task)) {
      auto at = std::lower_bound(
          nodes.begin(), nodes.end(), node->name(),
          [](const NodeInfo* a, const std::string& name) { return a->name() < name; });
      if (at == nodes.end() || *at != node) continue;
      const auto i = static_cast<size_t>(at - nodes.begin());
      if ((i + n - start) % n < processed) continue;  // in the sample already
      if (PassesAllocatePredicate(ssn, task, *node, errors)) feasible.push_back(i);
    }
  }
  std::sort(feasible.begin(), feasible.end());
  for (size_t i : feasible) out.push_back(nodes[i]);
  return out;
}

NodeInfo* SelectBestNode(const Session& ssn, const TaskInfo& task,
                         const std::vector<NodeInfo*>& nodes) {
  if (nodes.empty()) return nullptr;
  if (nodes.size() == 1) return nodes[0];
  std::vector<const NodeInfo*> view(nodes.begin(), nodes.end());
  std::vector<double> batch = ssn.BatchNodeOrder(task, view);
  NodeInfo* best = nullptr;
  double best_score = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const double score = ssn.NodeOrder(task, *nodes[i]) + batch[i];
    if (best == nullptr || score > best_score) {
      best = nodes[i];
      best_score = score;
    }
  }
  return best;
}

StarvingJobs CollectStarvingJobs(Session& ssn) {
  StarvingJobs out{PriorityQueue<QueueInfo>([&ssn](const QueueInfo& l, const QueueInfo& r) {
                     return ssn.QueueOrder(l, r);
                   }),
                   {}};
  for (auto& [id, job] : ssn.jobs()) {
    if (job.IsPending() || !job.never_fits.empty() || ssn.JobValid(job).has_value()) continue;
    QueueInfo* queue = ssn.FindQueue(job.queue);
    if (queue == nullptr || !ssn.JobStarving(job)) continue;
    if (job.TasksWithStatus(TaskStatus::kPending).empty()) continue;
    auto [it, inserted] = out.jobs_by_queue.try_emplace(
        queue->name, [&ssn](const JobInfo& l, const JobInfo& r) { return ssn.JobOrder(l, r); });
    if (inserted) out.queues.Push(queue);
    it->second.Push(&job);
  }
  return out;
}

std::optional<JobDomains> HardEvictionDomains(Session& ssn, const JobInfo& job) {
  for (const SubGroupPolicy& p : job.sub_group_policies) {
    if (p.network_topology.has_value() && p.network_topology->hard) {
      return JobDomains{{},
                        fmt::format("partition {} has a hard networkTopology of its own; "
                                    "only gangpreempt and gangreclaim place a partition as a unit",
                                    p.name)};
    }
  }
  if (!job.network_topology.has_value() || !job.network_topology->hard) return std::nullopt;
  ByCapacity by_capacity(ssn);
  return ssn.JobDomainsFor(job);
}

void NoteHardTopologyFailure(std::string_view action, JobInfo& job, const JobDomains& domains) {
  std::string why;
  if (!domains.domains.empty()) {
    const NetworkTopologyConstraint& nt = *job.network_topology;
    const std::string tier = nt.highest_tier.has_value() ? fmt::format("{}", *nt.highest_tier)
                                                         : std::string(nt.highest_tier_name);
    why = fmt::format(
        "no victims make room inside any of its {} allowed HyperNode(s) (hard tier {}; first {})",
        domains.domains.size(), tier.empty() ? "any" : tier, domains.domains.front().name);
  } else {
    why = domains.unsatisfied;
  }
  if (why.empty()) return;
  const std::string note = fmt::format("{}: {}", action, why);
  if (job.job_fit_errors.find(note) != std::string::npos) return;
  job.job_fit_errors = job.job_fit_errors.empty() ? note : job.job_fit_errors + "; " + note;
}

}  // namespace basalt::sched
