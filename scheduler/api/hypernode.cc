#include "scheduler/api/hypernode.h"

#include <algorithm>
#include <functional>
#include <regex>
#include <set>

namespace basalt::sched {

HyperNodeTree HyperNodeTree::Build(const HyperNodeMap& hypernodes,
                                   const std::map<std::string, NodeInfo>& nodes) {
  std::map<std::string, std::set<std::string>> resolved;
  std::set<std::string> visiting;
  std::function<const std::set<std::string>&(const HyperNodeInfo&)> resolve =
      [&](const HyperNodeInfo& hn) -> const std::set<std::string>& {
    if (auto it = resolved.find(hn.name); it != resolved.end()) return it->second;
    visiting.insert(hn.name);
    std::set<std::string> out;
    for (const HyperNodeMemberInfo& m : hn.members) {
      if (m.hypernode) {
        std::vector<const HyperNodeInfo*> children;
        if (!m.exact_name.empty()) {
          if (auto it = hypernodes.find(m.exact_name); it != hypernodes.end()) {
            children.push_back(&it->second);
          }
        } else if (!m.regex_pattern.empty()) {
          try {
            const std::regex re(m.regex_pattern);
            for (const auto& [name, child] : hypernodes) {
              if (std::regex_search(name, re)) children.push_back(&child);
            }
          } catch (const std::regex_error&) {
          }
        }
        for (const HyperNodeInfo* child : children) {
          if (child->tier >= hn.tier || visiting.count(child->name) != 0) continue;
          const std::set<std::string>& sub = resolve(*child);
          out.insert(sub.begin(), sub.end());
        }
        continue;
      }
      if (!m.exact_name.empty()) {
        if (nodes.count(m.exact_name) != 0) out.insert(m.exact_name);
      } else if (!m.regex_pattern.empty()) {
        try {
          const std::regex re(m.regex_pattern);
          for (const auto& [name, node] : nodes) {
            if (std::regex_search(name, re)) out.insert(name);
          }
        } catch (const std::regex_error&) {
        }
      } else if (m.by_labels) {
        for (const auto& entry : nodes) {
          // Not a structured binding: Clang 14 (the sanitizer builds) cannot capture one.
          const auto& labels = entry.second.labels();
          const bool match = std::all_of(m.labels.begin(), m.labels.end(), [&](const auto& kv) {
            auto it = labels.find(kv.first);
            return it != labels.end() && it->second == kv.second;
          });
          if (match) out.insert(entry.first);
        }
      }
    }
    visiting.erase(hn.name);
    return resolved.emplace(hn.name, std::move(out)).first->second;
  };

  HyperNodeTree tree;
  for (const auto& [name, hn] : hypernodes) {
    const std::set<std::string>& members = resolve(hn);
    tree.domains_.push_back(Domain{hn.name, hn.tier, hn.tier_name,
                                   std::vector<std::string>(members.begin(), members.end())});
  }
  std::sort(tree.domains_.begin(), tree.domains_.end(), [](const Domain& a, const Domain& b) {
    return a.tier != b.tier ? a.tier < b.tier : a.name < b.name;
  });
  for (size_t i = 0; i < tree.domains_.size(); ++i) tree.index_[tree.domains_[i].name] = i;
  return tree;
}

const HyperNodeTree::Domain* HyperNodeTree::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &domains_[it->second];
}

std::optional<int32_t> HyperNodeTree::TierOfName(const std::string& tier_name) const {
  for (const Domain& d : domains_) {
    if (d.tier_name == tier_name) return d.tier;
  }
  return std::nullopt;
}

const HyperNodeTree::Domain* HyperNodeTree::LowestContaining(const std::string& node,
                                                             int32_t max_tier) const {
  for (const Domain& d : domains_) {
    if (d.tier > max_tier) break;
    if (std::binary_search(d.nodes.begin(), d.nodes.end(), node)) return &d;
  }
  return nullptr;
}

}  // namespace basalt::sched
