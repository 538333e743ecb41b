#include "scheduler/plugins/drf/hdrf.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace basalt::sched {

namespace {

double Ratio(double a, double t) {
  if (t == 0) return a == 0 ? 0.0 : 1.0;
  return a / t;
}

std::vector<std::string_view> SplitSlash(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find('/', start);
    out.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

HdrfPath HdrfPathFromAnnotations(std::string_view hierarchy, std::string_view weights) {
  HdrfPath out;
  auto segments = SplitSlash(hierarchy);
  auto ws = SplitSlash(weights);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i == 0 && segments[i] == "root") continue;
    if (segments[i].empty()) continue;
    double w = 1;
    if (i < ws.size()) {
      std::string text(ws[i]);
      char* end = nullptr;
      double parsed = std::strtod(text.c_str(), &end);
      if (end != text.c_str() && *end == '\0') w = parsed;
    }
    out.segments.emplace_back(segments[i]);
    out.weights.push_back(std::max(w, 1.0));
  }
  return out;
}

HdrfTree::HdrfTree(const Resource& total) {
  dims_.emplace_back(kCpu);
  dims_.emplace_back(kMemory);
  for (const auto& [name, v] : total.scalars()) dims_.push_back(name);
  total_ = Vector(total);
  demanding_.assign(dims_.size(), true);
  for (size_t d = 0; d < dims_.size(); ++d) demanding_[d] = 0 < total_[d];
  nodes_.emplace_back();
  nodes_[0].name = "root";
  nodes_[0].alloc.assign(dims_.size(), 0);
  nodes_[0].held.assign(dims_.size(), 0);
}

std::vector<double> HdrfTree::Vector(const Resource& r) const {
  std::vector<double> v(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) v[d] = static_cast<double>(r.Get(dims_[d]));
  return v;
}

double HdrfTree::DominantShare(const std::vector<double>& alloc) const {
  double share = 0;
  for (size_t d = 0; d < dims_.size(); ++d) share = std::max(share, Ratio(alloc[d], total_[d]));
  return share;
}

void HdrfTree::AddJob(const std::string& job, const std::vector<std::string>& path,
                      const std::vector<double>& weights, const Resource& allocated,
                      const Resource& request) {
  if (jobs_.count(job) != 0) return;
  int at = 0;
  for (size_t i = 0; i < path.size(); ++i) {
    auto it = nodes_[at].child_index.find(path[i]);
    if (it != nodes_[at].child_index.end()) {
      at = it->second;
      continue;
    }
    const int child = static_cast<int>(nodes_.size());
    Node n;
    n.name = path[i];
    n.weight = i < weights.size() ? std::max(weights[i], 1.0) : 1.0;
    n.parent = at;
    n.alloc.assign(dims_.size(), 0);
    n.held.assign(dims_.size(), 0);
    nodes_.push_back(std::move(n));
    nodes_[at].children.push_back(child);
    nodes_[at].child_index.emplace(path[i], child);
    at = child;
  }
  const int leaf = static_cast<int>(nodes_.size());
  Node n;
  n.name = job;
  n.parent = at;
  n.leaf = true;
  n.allocated = allocated;
  n.request = request;
  n.alloc.assign(dims_.size(), 0);
  n.held.assign(dims_.size(), 0);
  nodes_.push_back(std::move(n));
  nodes_[at].children.push_back(leaf);
  nodes_[at].child_index.emplace(job, leaf);
  jobs_.emplace(job, leaf);
  total_allocated_ += allocated;
  // Only the new leaf's path changed, unless the demanding resources did: recomputing the whole
  // tree for every job made opening a session quadratic in its jobs (sched_hdrf_bench: 5000
  // jobs spent most of the cycle here).
  if (UpdateDemanding()) {
    UpdateAll();
    return;
  }
  for (int i = leaf; i >= 0; i = nodes_[i].parent) UpdateNode(i);
}

void HdrfTree::Change(const std::string& job, const Resource& delta, int sign) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  Node& leaf = nodes_[it->second];
  if (sign > 0) {
    leaf.allocated += delta;
    total_allocated_ += delta;
  } else {
    leaf.allocated -= delta;
    total_allocated_ -= delta;
  }
  if (UpdateDemanding()) {
    UpdateAll();
    return;
  }
  for (int i = it->second; i >= 0; i = nodes_[i].parent) UpdateNode(i);
}

bool HdrfTree::UpdateDemanding() {
  bool changed = false;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const bool now = static_cast<double>(total_allocated_.Get(dims_[d])) < total_[d];
    if (now != demanding_[d]) {
      demanding_[d] = now;
      changed = true;
    }
  }
  return changed;
}

void HdrfTree::UpdateNode(int i) {
  Node& n = nodes_[i];
  if (n.leaf) {
    n.alloc = Vector(n.allocated);
    n.held = n.alloc;
    n.share = DominantShare(n.alloc);
    n.held_share = n.share;
    n.saturated = false;
    for (size_t d = 0; d < dims_.size() && !n.saturated; ++d) {
      const int64_t held = n.allocated.Get(dims_[d]);
      const int64_t wanted = n.request.Get(dims_[d]);
      if (held == 0 || wanted == 0) continue;
      n.saturated = held >= wanted || !demanding_[d];
    }
    return;
  }
  // The smallest share / weight among the non-empty unsaturated children; each of them is
  // counted as if it held weight x that (its allocation scaled). Deliberately differs from
  // Volcano, which scales every such child to the smallest plain share: with children of
  // weights 1 and 3 at their fair 2 and 6 GPUs it counts the parent as holding 4, so a subtree
  // whose children have unequal weights gets more than its own weight entitles it to.
  double min_ratio = -1;
  for (int c : n.children) {
    const Node& child = nodes_[c];
    if (child.share == 0 || child.saturated) continue;
    const double ratio = child.share / child.weight;
    if (min_ratio < 0 || ratio < min_ratio) min_ratio = ratio;
  }
  std::fill(n.alloc.begin(), n.alloc.end(), 0.0);
  std::fill(n.held.begin(), n.held.end(), 0.0);
  bool saturated = true;
  for (int c : n.children) {
    const Node& child = nodes_[c];
    if (!child.saturated) saturated = false;
    for (size_t d = 0; d < dims_.size(); ++d) n.held[d] += child.held[d];
    if (child.share == 0) continue;
    const double scale = child.saturated ? 1.0 : child.weight * min_ratio / child.share;
    for (size_t d = 0; d < dims_.size(); ++d) n.alloc[d] += child.alloc[d] * scale;
  }
  n.share = DominantShare(n.alloc);
  n.held_share = DominantShare(n.held);
  n.saturated = saturated;
}

void HdrfTree::UpdateAll() {
  // Children have higher indices than their parents, so a reverse walk is a post-order.
  for (int i = static_cast<int>(nodes_.size()) - 1; i >= 0; --i) UpdateNode(i);
}

int HdrfTree::Find(const std::vector<std::string>& path) const {
  int at = 0;
  for (const auto& segment : path) {
    auto it = nodes_[at].child_index.find(segment);
    if (it == nodes_[at].child_index.end()) return -1;
    at = it->second;
  }
  return at;
}

std::vector<std::string> HdrfTree::JobPath(const std::string& job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return {};
  std::vector<std::string> path;
  for (int i = it->second; i > 0; i = nodes_[i].parent) path.push_back(nodes_[i].name);
  std::reverse(path.begin(), path.end());
  return path;
}

double HdrfTree::Share(const std::vector<std::string>& path) const {
  const int i = Find(path);
  return i < 0 ? 0.0 : nodes_[i].share;
}

double HdrfTree::HeldShare(const std::vector<std::string>& path) const {
  const int i = Find(path);
  return i < 0 ? 0.0 : nodes_[i].held_share;
}

bool HdrfTree::Saturated(const std::vector<std::string>& path) const {
  const int i = Find(path);
  return i < 0 ? false : nodes_[i].saturated;
}

double HdrfTree::Compare(const std::vector<std::string>& l, const std::vector<std::string>& r,
                         bool use_saturation) const {
  return CompareAt(l, r, use_saturation, /*held=*/false);
}

double HdrfTree::CompareHeld(const std::vector<std::string>& l,
                             const std::vector<std::string>& r) const {
  return CompareAt(l, r, /*use_saturation=*/false, /*held=*/true);
}

double HdrfTree::CompareAt(const std::vector<std::string>& l, const std::vector<std::string>& r,
                           bool use_saturation, bool held) const {
  int ln = 0;
  int rn = 0;
  const size_t depth = std::min(l.size(), r.size());
  auto value = [this, held](int i) {
    if (i < 0) return 0.0;
    return (held ? nodes_[i].held_share : nodes_[i].share) / nodes_[i].weight;
  };
  for (size_t i = 0; i < depth; ++i) {
    auto child = [this](int at, const std::string& name) {
      if (at < 0) return -1;
      auto it = nodes_[at].child_index.find(name);
      return it == nodes_[at].child_index.end() ? -1 : it->second;
    };
    ln = child(ln, l[i]);
    rn = child(rn, r[i]);
    if (ln >= 0 && ln == rn) continue;  // a common ancestor
    const bool lsat = ln >= 0 && nodes_[ln].saturated;
    const bool rsat = rn >= 0 && nodes_[rn].saturated;
    if (use_saturation && lsat != rsat) return lsat ? 1.0 : -1.0;
    const double lv = value(ln);
    const double rv = value(rn);
    if (lv != rv) return lv - rv;
  }
  return 0;
}

}  // namespace basalt::sched
