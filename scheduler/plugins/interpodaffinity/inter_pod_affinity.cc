#include "scheduler/plugins/interpodaffinity/inter_pod_affinity.h"

#include <algorithm>
#include <limits>

#include "scheduler/api/fit_error.h"

namespace basalt::sched {
namespace {

constexpr int64_t kMaxNodeScore = 100;
// kube-scheduler's hardPodAffinityWeight: what a placed pod's required affinity term that
// matches the incoming pod adds to the score.
constexpr int64_t kHardPodAffinityWeight = 1;

bool MatchesAll(const std::vector<PodAffinityTerm>& terms, const TaskInfo& pod) {
  if (terms.empty()) return false;
  for (const auto& term : terms) {
    if (!term.MatchesPod(pod.namespace_name, pod.labels)) return false;
  }
  return true;
}

}  // namespace

InterPodAffinity::InterPodAffinity(const ClusterInfo& cluster) : cluster_(cluster) {
  auto index = [this](const TaskInfo& t) {
    if (t.pod_affinity == nullptr) return;
    with_affinity_.push_back(&t);
    if (!t.pod_affinity->required_anti_affinity.empty()) any_required_anti_ = true;
  };
  for (const auto& [id, job] : cluster_.jobs()) {
    for (const auto& [uid, t] : job.tasks()) index(t);
  }
  for (const auto& [uid, t] : cluster_.foreign_tasks()) index(t);
}

const NodeInfo* InterPodAffinity::PlacedNode(const TaskInfo& t) const {
  if (t.node_name.empty() || t.status == TaskStatus::kReleasing ||
      t.status == TaskStatus::kPending || IsCompletedStatus(t.status)) {
    return nullptr;
  }
  const NodeInfo* node = cluster_.FindNode(t.node_name);
  if (node == nullptr || node->tasks().count(t.uid) == 0) return nullptr;
  return node;
}

void InterPodAffinity::Add(TopologyCounts& counts, const std::string& key, const NodeInfo& node,
                           int64_t value) {
  auto label = node.labels().find(key);
  if (label == node.labels().end()) return;
  counts[key][label->second] += value;
}

int64_t InterPodAffinity::Get(const TopologyCounts& counts, const std::string& key,
                              const NodeInfo& node) {
  auto by_key = counts.find(key);
  if (by_key == counts.end()) return 0;
  auto label = node.labels().find(key);
  if (label == node.labels().end()) return 0;
  auto it = by_key->second.find(label->second);
  return it == by_key->second.end() ? 0 : it->second;
}

const InterPodAffinity::FilterState& InterPodAffinity::StateFor(const TaskInfo& task) {
  if (state_.generation == generation_ && state_.task_uid == task.uid) return state_;
  state_ = FilterState{task.uid, generation_, {}, {}, {}};
  const PodAffinity* own = task.pod_affinity.get();
  if (own != nullptr && (!own->required_affinity.empty() || !own->required_anti_affinity.empty())) {
    // The incoming pod's terms against every placed pod, node by node.
    for (const auto& [name, node] : cluster_.nodes()) {
      for (const auto& [uid, placed] : node.tasks()) {
        if (uid == task.uid || placed->status == TaskStatus::kReleasing) continue;
        if (MatchesAll(own->required_affinity, *placed)) {
          for (const auto& term : own->required_affinity) {
            Add(state_.affinity, term.topology_key, node, 1);
          }
        }
        for (const auto& term : own->required_anti_affinity) {
          if (term.MatchesPod(placed->namespace_name, placed->labels)) {
            Add(state_.anti_affinity, term.topology_key, node, 1);
          }
        }
      }
    }
  }
  if (any_required_anti_) {
    // Placed pods' anti-affinity against the incoming pod (their terms, their namespaces).
    for (const TaskInfo* placed : with_affinity_) {
      if (placed->uid == task.uid || placed->pod_affinity->required_anti_affinity.empty()) continue;
      const NodeInfo* node = PlacedNode(*placed);
      if (node == nullptr) continue;
      for (const auto& term : placed->pod_affinity->required_anti_affinity) {
        if (term.MatchesPod(task.namespace_name, task.labels)) {
          Add(state_.existing_anti, term.topology_key, *node, 1);
        }
      }
    }
  }
  return state_;
}

Outcome InterPodAffinity::Filter(const TaskInfo& task, const NodeInfo& node,
                                 const std::string& plugin) {
  const PodAffinity* own = task.pod_affinity.get();
  const bool own_required =
      own != nullptr && (!own->required_affinity.empty() || !own->required_anti_affinity.empty());
  if (!own_required && !any_required_anti_) return Outcome::Success();
  const FilterState& state = StateFor(task);

  if (own != nullptr && !own->required_affinity.empty()) {
    bool pods_exist = true;
    for (const auto& term : own->required_affinity) {
      // The node must carry every topology key the terms name.
      if (node.labels().count(term.topology_key) == 0) {
        return Outcome::Unresolvable(plugin, std::string(kReasonPodAffinity));
      }
      if (Get(state.affinity, term.topology_key, node) <= 0) pods_exist = false;
    }
    // The first pod of a group with affinity to itself: allowed when no placed pod matches the
    // terms at all and the pod matches its own terms (as kube-scheduler does).
    if (!pods_exist && !(state.affinity.empty() && MatchesAll(own->required_affinity, task))) {
      return Outcome::Unresolvable(plugin, std::string(kReasonPodAffinity));
    }
  }
  if (own != nullptr) {
    for (const auto& term : own->required_anti_affinity) {
      if (Get(state.anti_affinity, term.topology_key, node) > 0) {
        return Outcome::Unschedulable(plugin, std::string(kReasonPodAntiAffinity));
      }
    }
  }
  for (const auto& [key, values] : state.existing_anti) {
    auto label = node.labels().find(key);
    if (label == node.labels().end()) continue;
    auto it = values.find(label->second);
    if (it != values.end() && it->second > 0) {
      return Outcome::Unschedulable(plugin, std::string(kReasonExistingPodsAntiAffinity));
    }
  }
  return Outcome::Success();
}

std::vector<int64_t> InterPodAffinity::Score(const TaskInfo& task,
                                             const std::vector<const NodeInfo*>& nodes) {
  const PodAffinity* own = task.pod_affinity.get();
  const bool own_preferred =
      own != nullptr && (!own->preferred_affinity.empty() || !own->preferred_anti_affinity.empty());
  if (!own_preferred && with_affinity_.empty()) return {};

  TopologyCounts scores;
  auto process = [&](const TaskInfo& placed, const NodeInfo& node) {
    if (placed.uid == task.uid) return;
    if (own_preferred) {
      for (const auto& w : own->preferred_affinity) {
        if (w.term.MatchesPod(placed.namespace_name, placed.labels)) {
          Add(scores, w.term.topology_key, node, w.weight);
        }
      }
      for (const auto& w : own->preferred_anti_affinity) {
        if (w.term.MatchesPod(placed.namespace_name, placed.labels)) {
          Add(scores, w.term.topology_key, node, -w.weight);
        }
      }
    }
    if (const PodAffinity* theirs = placed.pod_affinity.get(); theirs != nullptr) {
      for (const auto& term : theirs->required_affinity) {
        if (term.MatchesPod(task.namespace_name, task.labels)) {
          Add(scores, term.topology_key, node, kHardPodAffinityWeight);
        }
      }
      for (const auto& w : theirs->preferred_affinity) {
        if (w.term.MatchesPod(task.namespace_name, task.labels)) {
          Add(scores, w.term.topology_key, node, w.weight);
        }
      }
      for (const auto& w : theirs->preferred_anti_affinity) {
        if (w.term.MatchesPod(task.namespace_name, task.labels)) {
          Add(scores, w.term.topology_key, node, -w.weight);
        }
      }
    }
  };
  if (own_preferred) {
    for (const auto& [name, node] : cluster_.nodes()) {
      for (const auto& [uid, placed] : node.tasks()) {
        if (placed->status != TaskStatus::kReleasing) process(*placed, node);
      }
    }
  } else {
    for (const TaskInfo* placed : with_affinity_) {
      if (const NodeInfo* node = PlacedNode(*placed); node != nullptr) process(*placed, *node);
    }
  }
  if (scores.empty()) return {};

  std::vector<int64_t> raw(nodes.size(), 0);
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& [key, values] : scores) {
      auto label = nodes[i]->labels().find(key);
      if (label == nodes[i]->labels().end()) continue;
      auto it = values.find(label->second);
      if (it != values.end()) raw[i] += it->second;
    }
    min = std::min(min, raw[i]);
    max = std::max(max, raw[i]);
  }
  std::vector<int64_t> out(nodes.size(), 0);
  if (max > min) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      out[i] =
          static_cast<int64_t>(static_cast<double>(kMaxNodeScore) *
                               static_cast<double>(raw[i] - min) / static_cast<double>(max - min));
    }
  }
  return out;
}

}  // namespace basalt::sched
