#include "scheduler/api/hypernode.h"

#include <catch2/catch.hpp>

#include "fmt/format.h"

namespace basalt::sched {
namespace {

HyperNodeMemberInfo NodeNamed(std::string name) {
  HyperNodeMemberInfo m;
  m.exact_name = std::move(name);
  return m;
}
HyperNodeMemberInfo HyperNodeNamed(std::string name) {
  HyperNodeMemberInfo m = NodeNamed(std::move(name));
  m.hypernode = true;
  return m;
}

std::map<std::string, NodeInfo> Nodes(int n) {
  std::map<std::string, NodeInfo> out;
  for (int i = 0; i < n; ++i) {
    NodeInfo node(fmt::format("n{}", i), Resource(1000, 1));
    node.labels().emplace("rack", i < 2 ? "a" : "b");
    out.emplace(node.name(), std::move(node));
  }
  return out;
}

TEST_CASE("HyperNodeTree: members by name, regex, labels and lower-tier HyperNodes",
          "[sched][api][hypernode]") {
  HyperNodeMap hns;
  hns["s0"] =
      HyperNodeInfo{"s0", 1, "switch", {NodeNamed("n0"), NodeNamed("n1"), NodeNamed("gone")}};
  HyperNodeMemberInfo regex;
  regex.regex_pattern = "^n[23]$";
  hns["s1"] = HyperNodeInfo{"s1", 1, "switch", {regex}};
  HyperNodeMemberInfo labels;
  labels.by_labels = true;
  labels.labels = {{"rack", "b"}};
  hns["s2"] = HyperNodeInfo{"s2", 1, "switch", {labels}};
  hns["spine"] = HyperNodeInfo{"spine", 2, "spine", {HyperNodeNamed("s0"), HyperNodeNamed("s1")}};
  // A member of the same tier and one that does not exist contribute nothing.
  hns["odd"] = HyperNodeInfo{"odd", 2, "", {HyperNodeNamed("spine"), HyperNodeNamed("nope")}};

  const HyperNodeTree tree = HyperNodeTree::Build(hns, Nodes(5));
  std::vector<std::string> order;
  for (const auto& d : tree.domains()) order.push_back(d.name);
  CHECK(order == std::vector<std::string>{"s0", "s1", "s2", "odd", "spine"});
  CHECK(tree.Find("s0")->nodes == std::vector<std::string>{"n0", "n1"});
  CHECK(tree.Find("s1")->nodes == std::vector<std::string>{"n2", "n3"});
  CHECK(tree.Find("s2")->nodes == std::vector<std::string>{"n2", "n3", "n4"});
  CHECK(tree.Find("spine")->nodes == std::vector<std::string>{"n0", "n1", "n2", "n3"});
  CHECK(tree.Find("odd")->nodes.empty());
  CHECK(tree.Find("missing") == nullptr);
  CHECK(tree.TierOfName("spine") == 2);
  CHECK_FALSE(tree.TierOfName("rack").has_value());
  CHECK(tree.LowestContaining("n1", 2)->name == "s0");
  CHECK(tree.LowestContaining("n0", 0) == nullptr);
}

TEST_CASE("HyperNodeTree: a bad regex matches nothing, cycles are cut by tier",
          "[sched][api][hypernode]") {
  HyperNodeMap hns;
  HyperNodeMemberInfo bad;
  bad.regex_pattern = "n[";
  hns["a"] = HyperNodeInfo{"a", 1, "", {bad}};
  hns["b"] = HyperNodeInfo{"b", 2, "", {HyperNodeNamed("c")}};
  hns["c"] = HyperNodeInfo{"c", 2, "", {HyperNodeNamed("b")}};
  const HyperNodeTree tree = HyperNodeTree::Build(hns, Nodes(2));
  CHECK(tree.Find("a")->nodes.empty());
  CHECK(tree.Find("b")->nodes.empty());
  CHECK(tree.Find("c")->nodes.empty());
}

}  // namespace
}  // namespace basalt::sched
