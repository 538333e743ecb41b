#pragma once
// SchedConfYaml: the scheduler configuration most scheduler tests run, built from a short spec
// (as e2e/scheduler/lib.sh's sched_conf does for the e2e suites) instead of each test writing
// the same YAML: `actions`, then Volcano's default two tiers (priority, gang, conformance;
// overcommit, drf, predicates, proportion, nodeorder) with `extra` appended to the second tier.
// `extra` holds plugin entries as YAML lines of that tier, e.g.
//   SchedConfYaml("enqueue, allocate", "  - name: binpack\n    arguments:\n      binpack.cpu: 0\n")
// SchedConf parses the result (a test failure if it does not parse).

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "scheduler/conf/config.h"

namespace basalt::sched::testing {

// "  - name: <plugin>\n": one plugin entry without arguments, for SchedConfYaml's `extra`.
inline std::string PluginEntry(std::string_view plugin) {
  return fmt::format("  - name: {}\n", plugin);
}

inline std::string SchedConfYaml(std::string_view actions, std::string_view extra = "") {
  static constexpr std::string_view kTier1[] = {"priority", "gang", "conformance"};
  static constexpr std::string_view kTier2[] = {"overcommit", "drf", "predicates", "proportion",
                                                "nodeorder"};
  std::string out = fmt::format("actions: \"{}\"\ntiers:\n- plugins:\n", actions);
  for (std::string_view p : kTier1) out += PluginEntry(p);
  out += "- plugins:\n";
  for (std::string_view p : kTier2) out += PluginEntry(p);
  out += extra;
  return out;
}

inline SchedulerConfig SchedConf(std::string_view actions, std::string_view extra = "") {
  auto config = ParseSchedulerConfig(SchedConfYaml(actions, extra));
  REQUIRE(config.ok());
  return *config;
}

}  // namespace basalt::sched::testing
