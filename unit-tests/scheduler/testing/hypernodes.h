#pragma once
// HyperNode fixtures for the scheduler tests: switches of named nodes under one spine.

#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "scheduler/api/hypernode.h"

namespace basalt::sched::testing {

inline HyperNodeMemberInfo HyperNodeMember(std::string name, bool hypernode) {
  HyperNodeMemberInfo m;
  m.hypernode = hypernode;
  m.exact_name = std::move(name);
  return m;
}

// Tier-1 HyperNodes s0, s1, ... holding `switches[i]`'s nodes, under the tier-2 HyperNode
// s<switches.size()> (the spine).
inline std::shared_ptr<HyperNodeMap> SwitchesUnderSpine(
    const std::vector<std::vector<std::string>>& switches) {
  auto hns = std::make_shared<HyperNodeMap>();
  HyperNodeInfo spine{fmt::format("s{}", switches.size()), 2, "spine", {}};
  for (size_t i = 0; i < switches.size(); ++i) {
    HyperNodeInfo sw{fmt::format("s{}", i), 1, "switch", {}};
    for (const std::string& n : switches[i]) sw.members.push_back(HyperNodeMember(n, false));
    spine.members.push_back(HyperNodeMember(sw.name, true));
    (*hns)[sw.name] = std::move(sw);
  }
  (*hns)[spine.name] = std::move(spine);
  return hns;
}

}  // namespace basalt::sched::testing
