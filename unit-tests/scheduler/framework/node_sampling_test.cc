#include "scheduler/framework/node_sampling.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace basalt::sched {
namespace {

struct Case {
  std::string name;
  NodeSamplingOptions options;
  int64_t nodes;
  int64_t want;
};

TEST_CASE("NodeSampling: how many feasible nodes a pass looks for", "[sched][sampling]") {
  const NodeSamplingOptions defaults;
  std::vector<Case> cases = {
      {"no nodes", defaults, 0, 0},
      {"small cluster: every node", defaults, 8, 8},
      {"exactly the minimum: every node", defaults, 100, 100},
      {"adaptive 50 - 200/125 = 49% of 200 is 98, raised to the minimum", defaults, 200, 100},
      {"adaptive 1000 nodes: 42%", defaults, 1000, 420},
      {"adaptive 5000 nodes: 10%", defaults, 5000, 500},
      {"adaptive floors at the minimum percentage", defaults, 10000, 500},
      {"adaptive floor is configurable", NodeSamplingOptions{0, 100, 20}, 10000, 2000},
      {"fixed percentage", NodeSamplingOptions{30, 100, 5}, 1000, 300},
      {"fixed percentage raised to the minimum", NodeSamplingOptions{5, 100, 5}, 1000, 100},
      {"100 percent: every node", NodeSamplingOptions{100, 100, 5}, 1000, 1000},
      {"lower minimum samples small clusters", NodeSamplingOptions{50, 10, 5}, 40, 20},
      {"never fewer than one", NodeSamplingOptions{1, 0, 5}, 10, 1},
  };
  for (const auto& c : cases) {
    SECTION(c.name) { CHECK(NumFeasibleNodesToFind(c.options, c.nodes) == c.want); }
  }
}

TEST_CASE("NodeSampling: the start index rotates past the nodes checked", "[sched][sampling]") {
  NodeSampler s;
  CHECK(s.Start(10) == 0);
  s.Advance(4, 10);
  CHECK(s.Start(10) == 4);
  s.Advance(8, 10);
  CHECK(s.Start(10) == 2);
  CHECK(s.Start(2) == 0);  // fewer nodes now: wrapped into range
  s.Advance(10, 10);       // a full pass leaves the start where it was
  CHECK(s.Start(10) == 2);
  s.Advance(3, 0);  // no nodes: unchanged
  CHECK(s.Start(10) == 2);
}

}  // namespace
}  // namespace basalt::sched
