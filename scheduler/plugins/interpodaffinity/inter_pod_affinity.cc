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
    const PodAffinity& a = *t.pod_affinity;
    auto keys_of = [this](const PodAffinityTerm& term) {
      if (!term.selector.has_value()) return;
      for (const auto& [key, value] : term.selector->match_labels) selector_keys_.insert(key);
      for (const auto& req : term.selector->match_expressions) selector_keys_.insert(req.key);
    };
    for (const auto& term : a.required_affinity) keys_of(term);
    for (const auto& term : a.required_anti_affinity) keys_of(term);
    for (const auto& w : a.preferred_affinity) keys_of(w.term);
    for (const auto& w : a.preferred_anti_affinity) keys_of(w.term);
    if (!a.required_anti_affinity.empty()) any_required_anti_ = true;
    if (!a.required_affinity.empty() || !a.preferred_affinity.empty() ||
        !a.preferred_anti_affinity.empty()) {
      with_scoring_terms_.push_back(&t);
    }
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
  if (label == node.labels().end() || value == 0) return;
  auto& by_value = counts[key];
  int64_t& v = by_value[label->second];
  v += value;
  if (v == 0) {
    by_value.erase(label->second);
    if (by_value.empty()) counts.erase(key);
  }
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

bool InterPodAffinity::SameSignature(const TaskInfo& task) const {
  if (task.namespace_name != state_.namespace_name) return false;
  for (const std::string& key : selector_keys_) {
    auto mine = task.labels->find(key);
    auto theirs = state_.labels->find(key);
    const bool has_mine = mine != task.labels.end();
    if (has_mine != (theirs != state_.labels.end())) return false;
    if (has_mine && mine->second != theirs->second) return false;
  }
  if (task.pod_affinity == state_.terms) return true;
  return task.pod_affinity != nullptr && state_.terms != nullptr &&
         *task.pod_affinity == *state_.terms;
}

void InterPodAffinity::Contribute(const TaskInfo& placed, const NodeInfo& node, int64_t sign) {
  if (const PodAffinity* own = state_.terms.get(); own != nullptr) {
    if (MatchesAll(own->required_affinity, placed)) {
      for (const auto& term : own->required_affinity) {
        Add(state_.affinity, term.topology_key, node, sign);
      }
    }
    for (const auto& term : own->required_anti_affinity) {
      if (term.MatchesPod(placed.namespace_name, placed.labels)) {
        Add(state_.anti_affinity, term.topology_key, node, sign);
      }
    }
  }
  // The placed pod's anti-affinity against this pod (its terms, its namespaces).
  if (const PodAffinity* theirs = placed.pod_affinity.get(); theirs != nullptr) {
    for (const auto& term : theirs->required_anti_affinity) {
      if (term.MatchesPod(state_.namespace_name, state_.labels)) {
        Add(state_.existing_anti, term.topology_key, node, sign);
      }
    }
  }
}

const InterPodAffinity::FilterState& InterPodAffinity::StateFor(const TaskInfo& task) {
  if (state_.valid && task.uid == last_uid_) return state_;
  const bool placed = PlacedNode(task) != nullptr;
  last_uid_ = task.uid;
  if (state_.valid && state_.shareable && !placed && SameSignature(task)) return state_;

  state_ = FilterState{};
  state_.valid = true;
  state_.shareable = !placed;
  state_.namespace_name = task.namespace_name;
  state_.labels = task.labels;
  state_.terms = task.pod_affinity;
  const PodAffinity* own = task.pod_affinity.get();
  if (own != nullptr && (!own->required_affinity.empty() || !own->required_anti_affinity.empty())) {
    // The pod's own terms need every placed pod.
    for (const auto& [name, node] : cluster_.nodes()) {
      for (const auto& [uid, other] : node.tasks()) {
        if (uid == task.uid || other->status == TaskStatus::kReleasing) continue;
        Contribute(*other, node, 1);
      }
    }
  } else if (any_required_anti_) {
    // Only the placed pods' anti-affinity can reject this pod.
    for (const TaskInfo* other : with_affinity_) {
      if (other->uid == task.uid) continue;
      if (const NodeInfo* node = PlacedNode(*other); node != nullptr) Contribute(*other, *node, 1);
    }
  }
  return state_;
}

void InterPodAffinity::TaskPlaced(const TaskInfo& task) {
  if (task.uid == last_uid_) last_uid_.clear();  // it must not count itself next time
  if (!state_.valid) return;
  const NodeInfo* node = PlacedNode(task);
  if (!state_.shareable || node == nullptr) {
    PlacementChanged();
    return;
  }
  Contribute(task, *node, 1);
}

void InterPodAffinity::TaskRemoved(const TaskInfo& task) {
  if (task.uid == last_uid_) last_uid_.clear();
  if (!state_.valid) return;
  // An evicted task is still on its node (Releasing); an undone allocation has left it, and its
  // node is not known here any more: rebuild then.
  const NodeInfo* node = task.status == TaskStatus::kReleasing && !task.node_name.empty()
                             ? cluster_.FindNode(task.node_name)
                             : nullptr;
  if (!state_.shareable || node == nullptr) {
    PlacementChanged();
    return;
  }
  Contribute(task, *node, -1);
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
  if (!own_preferred && with_scoring_terms_.empty()) return {};

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
    for (const TaskInfo* placed : with_scoring_terms_) {
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
