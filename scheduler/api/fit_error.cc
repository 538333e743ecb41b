#include "scheduler/api/fit_error.h"

#include <algorithm>
#include <numeric>

#include "fmt/format.h"

namespace basalt::sched {

namespace {

// Linear search below this many distinct reasons, the index above.
constexpr size_t kLinearReasons = 16;

bool IsReason(const std::string& r, std::string_view prefix, std::string_view rest) {
  return r.size() == prefix.size() + rest.size() && r.compare(0, prefix.size(), prefix) == 0 &&
         r.compare(prefix.size(), rest.size(), rest) == 0;
}

}  // namespace

std::string InsufficientReason(std::string_view resource) {
  return fmt::format("{}{}", kInsufficientPrefix, resource);
}

uint32_t FitErrors::Intern(std::string_view prefix, std::string_view rest) {
  if (last_id_ < reasons_.size() && IsReason(reasons_[last_id_], prefix, rest)) return last_id_;
  if (reasons_.size() <= kLinearReasons) {
    for (uint32_t i = 0; i < reasons_.size(); ++i) {
      if (IsReason(reasons_[i], prefix, rest)) return last_id_ = i;
    }
  } else {
    std::string key = fmt::format("{}{}", prefix, rest);
    if (auto it = reason_index_.find(key); it != reason_index_.end()) return last_id_ = it->second;
  }
  const auto id = static_cast<uint32_t>(reasons_.size());
  reasons_.push_back(fmt::format("{}{}", prefix, rest));
  counts_.push_back(0);
  if (reasons_.size() == kLinearReasons + 1) {
    for (uint32_t i = 0; i < reasons_.size(); ++i) reason_index_.emplace(reasons_[i], i);
  } else if (reasons_.size() > kLinearReasons + 1) {
    reason_index_.emplace(reasons_.back(), id);
  }
  return last_id_ = id;
}

void FitErrors::AddNode(const std::string& node, const uint32_t* ids, size_t n) {
  if (!nodes_.empty() && !(nodes_.back().name < node)) maybe_repeated_ = true;
  NodeEntry e;
  e.name = node;
  e.first = static_cast<uint32_t>(ids_.size());
  for (size_t i = 0; i < n; ++i) {
    // Reasons repeated within one call count once.
    if (std::find(ids_.begin() + e.first, ids_.end(), ids[i]) != ids_.end()) continue;
    ids_.push_back(ids[i]);
    ++counts_[ids[i]];
  }
  e.count = static_cast<uint32_t>(ids_.size() - e.first);
  nodes_.push_back(std::move(e));
}

void FitErrors::SetNodeError(const std::string& node, const std::vector<std::string>& reasons) {
  uint32_t small[4];
  std::vector<uint32_t> many;
  uint32_t* ids = small;
  if (reasons.size() > 4) {
    many.resize(reasons.size());
    ids = many.data();
  }
  for (size_t i = 0; i < reasons.size(); ++i) ids[i] = Intern({}, reasons[i]);
  AddNode(node, ids, reasons.size());
}

void FitErrors::SetNodeInsufficient(const std::string& node, std::string_view resource) {
  const uint32_t id = Intern(kInsufficientPrefix, resource);
  AddNode(node, &id, 1);
}

void FitErrors::Normalize() const {
  if (!maybe_repeated_) return;
  maybe_repeated_ = false;
  std::vector<size_t> order(nodes_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [this](size_t a, size_t b) { return nodes_[a].name < nodes_[b].name; });
  std::vector<NodeEntry> nodes;
  std::vector<uint32_t> ids;
  std::fill(counts_.begin(), counts_.end(), 0);
  for (size_t k = 0; k < order.size();) {
    NodeEntry e;
    e.name = nodes_[order[k]].name;
    e.first = static_cast<uint32_t>(ids.size());
    for (; k < order.size() && nodes_[order[k]].name == e.name; ++k) {
      const NodeEntry& from = nodes_[order[k]];
      for (uint32_t i = from.first; i < from.first + from.count; ++i) {
        if (std::find(ids.begin() + e.first, ids.end(), ids_[i]) != ids.end()) continue;
        ids.push_back(ids_[i]);
        ++counts_[ids_[i]];
      }
    }
    e.count = static_cast<uint32_t>(ids.size() - e.first);
    nodes.push_back(std::move(e));
  }
  nodes_ = std::move(nodes);
  ids_ = std::move(ids);
}

std::map<std::string, std::set<std::string>> FitErrors::nodes() const {
  Normalize();
  std::map<std::string, std::set<std::string>> out;
  for (const NodeEntry& e : nodes_) {
    auto& set = out[e.name];
    for (uint32_t i = e.first; i < e.first + e.count; ++i) set.insert(reasons_[ids_[i]]);
  }
  return out;
}

std::string FitErrors::Error() const {
  if (nodes_.empty() && !err_.empty()) return err_;
  Normalize();
  std::string prefix =
      err_.empty() ? fmt::format("0/{} nodes are unavailable", nodes_.size()) : err_;
  std::vector<std::string> parts;
  parts.reserve(reasons_.size());
  for (size_t i = 0; i < reasons_.size(); ++i) {
    if (counts_[i] > 0) parts.push_back(fmt::format("{} {}", counts_[i], reasons_[i]));
  }
  std::sort(parts.begin(), parts.end());
  std::string joined;
  for (const auto& p : parts) {
    if (!joined.empty()) joined += ", ";
    joined += p;
  }
  return fmt::format("{}: {}.", prefix, joined);
}

std::string NodeFitErrorMessage(std::string_view task_key, std::string_view node,
                                const std::vector<std::string>& reasons) {
  std::string joined;
  for (const auto& r : reasons) {
    if (!joined.empty()) joined += ", ";
    joined += r;
  }
  return fmt::format("task {} on node {} fit failed: {}", task_key, node, joined);
}

}  // namespace basalt::sched
