#include "scheduler/conf/config.h"

#include <catch2/catch.hpp>

#include "common/util/status.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"

namespace basalt::sched {
namespace {

absl::StatusOr<SchedulerConfig> Load(std::string_view yaml) {
  return LoadSchedulerConfig(yaml, NewInTreeRegistry(), NewInTreeActionRegistry());
}

std::string ErrorOf(std::string_view yaml) {
  auto c = Load(yaml);
  REQUIRE_FALSE(c.ok());
  return std::string(MessageOf(c.status()));
}

TEST_CASE("Config: parses actions, tiers, flags, arguments and configurations", "[sched][conf]") {
  auto c = Load(R"(
actions: " enqueue,allocate , backfill "
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 0.1
      binpack.resources: nvidia.com/gpu
      binpack.resources.nvidia.com/gpu: 2
configurations:
- name: allocate
  arguments:
    predicateErrorCacheEnable: "false"
)");
  REQUIRE(c.ok());
  CHECK(c->actions == std::vector<std::string>{"enqueue", "allocate", "backfill"});
  REQUIRE(c->tiers.size() == 2);
  const PluginOption& gang = c->tiers[0].plugins[1];
  CHECK(gang.name == "gang");
  CHECK_FALSE(gang.Enabled(flag::kPreemptable));
  CHECK(gang.Enabled(flag::kJobOrder));
  CHECK_FALSE(gang.Enabled(flag::kHierarchy));
  const Arguments& args = c->tiers[1].plugins[0].arguments;
  CHECK(*args.GetFloat("binpack.weight", 1) == Approx(0.1));
  CHECK(*args.GetInt("binpack.resources.nvidia.com/gpu", 1) == 2);
  CHECK(args.GetString("binpack.resources", "") == "nvidia.com/gpu");
  CHECK_FALSE(*c->ActionArguments("allocate").GetBool("predicateErrorCacheEnable", true));
  CHECK(c->ActionArguments("backfill").values().empty());
}

// Volcano's default plus gpuattributes, which registers nothing in a session without a pod
// asking for GPU attributes (so Volcano's YAML behaves the same).
TEST_CASE("Config: the built-in default is Volcano's plus gpuattributes", "[sched][conf]") {
  SchedulerConfig c = DefaultSchedulerConfig();
  CHECK(c.actions == std::vector<std::string>{"enqueue", "allocate", "backfill"});
  REQUIRE(c.tiers.size() == 2);
  std::vector<std::string> t1, t2;
  for (const auto& p : c.tiers[0].plugins) t1.push_back(p.name);
  for (const auto& p : c.tiers[1].plugins) t2.push_back(p.name);
  CHECK(t1 == std::vector<std::string>{"priority", "gang", "conformance"});
  CHECK(t2 == std::vector<std::string>{"overcommit", "drf", "gpuattributes", "predicates",
                                       "proportion", "nodeorder"});
  CHECK(Load(DefaultSchedulerConfigYaml()).ok());
}

TEST_CASE("Config: invalid files fail with errors that name the problem", "[sched][conf]") {
  CHECK_THAT(ErrorOf("actions: \"alocate, shuffle\"\ntiers: []\n"),
             Catch::Contains("no known action") && Catch::Contains("alocate, shuffle") &&
                 Catch::Contains("allocate"));
  CHECK_THAT(
      ErrorOf(
          "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enablePreemtable: false\n"),
      Catch::Contains("unknown key \"enablePreemtable\""));
  CHECK_THAT(
      ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrder: maybe\n"),
      Catch::Contains("enableJobOrder must be true or false"));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n   "
                     "   binpack.weight: heavy\n"),
             Catch::Contains("binpack.weight") && Catch::Contains("heavy"));
  CHECK_THAT(ErrorOf("actions: [allocate]\n"), Catch::Contains("comma-separated string"));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers: {a: 1}\n"),
             Catch::Contains("tiers must be a list"));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers: [\n"), Catch::Contains("not valid YAML"));
  CHECK_THAT(ErrorOf("tiers: []\n"), Catch::Contains("no actions"));
  CHECK_THAT(ErrorOf("actions: allocate\nextra: 1\n"),
             Catch::Contains("unknown top-level key \"extra\""));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: gang\n"),
             Catch::Contains("more than once"));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: "
                     "true\n  - name: proportion\n"),
             Catch::Contains("enableHierarchy"));
  // hdrf next to proportion in another tier, or after capacity's queue order: refused.
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: proportion\n- plugins:\n "
                     " - name: drf\n    enableHierarchy: true\n"),
             Catch::Contains("enableHierarchy"));
  CHECK_THAT(ErrorOf("actions: allocate\ntiers:\n- plugins:\n  - name: capacity\n  - name: drf\n "
                     "   enableHierarchy: true\n"),
             Catch::Contains("comes after capacity"));
  // A type error in a known plugin's arguments fails the whole file, even next to unknown names.
  CHECK_THAT(ErrorOf("actions: allocate, shuffle\ntiers:\n- plugins:\n  - name: sla\n  - name: "
                     "binpack\n    arguments:\n      binpack.weight: heavy\n"),
             Catch::Contains("binpack.weight"));
}

TEST_CASE("Config: unknown actions and plugins are skipped, the rest takes effect",
          "[sched][conf]") {
  // Volcano's CI configuration plus names Basalt lacks (an action, a configuration, plugins).
  auto c = Load(R"(actions: "enqueue, allocate, shuffle, backfill, reclaim, preempt, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: tdm
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
configurations:
- name: shuffle
  arguments: {period: 1m}
- name: preempt
  arguments: {predicateErrorCacheEnable: false}
)");
  REQUIRE(c.ok());
  CHECK(c->actions ==
        std::vector<std::string>{"enqueue", "allocate", "backfill", "reclaim", "preempt"});
  CHECK(c->skipped_actions == std::vector<std::string>{"shuffle"});
  CHECK(c->skipped_plugins == std::vector<std::string>{"sla", "tdm"});
  REQUIRE(c->tiers.size() == 2);  // the tier left empty is gone
  CHECK(c->tiers[0].plugins.size() == 3);
  CHECK_FALSE(c->tiers[0].plugins[1].Enabled(flag::kPreemptable));
  CHECK(c->tiers[1].plugins.size() == 6);
  REQUIRE(c->configurations.size() == 1);
  CHECK(c->configurations[0].name == "preempt");
  CHECK(c->ActionArguments("preempt").Has("predicateErrorCacheEnable"));
  CHECK(c->ActionArguments("shuffle").values().empty());
}

TEST_CASE("Arguments: typed accessors follow Volcano's parsing rules", "[sched][conf]") {
  Arguments a;
  a.Set("i", "3");
  a.Set("f", "0.25");
  a.Set("b", "True");
  a.Set("bs", "off");
  a.Set("bad", "x1");
  CHECK(*a.GetInt("i", 0) == 3);
  CHECK_FALSE(a.GetInt("f", 0).ok());  // ints must be integers
  CHECK(*a.GetFloat("i", 0) == 3.0);   // floats accept ints
  CHECK(*a.GetFloat("f", 0) == 0.25);
  CHECK(*a.GetBool("b", false));
  CHECK_FALSE(*a.GetBool("bs", true));
  CHECK(*a.GetInt("missing", 7) == 7);
  CHECK(a.GetBool("bad", false).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(a.GetString("missing", "d") == "d");
}

}  // namespace
}  // namespace basalt::sched
