#include "scheduler/framework/config_store.h"

#include <catch2/catch.hpp>

#include "common/util/status.h"
#include "scheduler/actions/registry.h"
#include "scheduler/plugins/registry.h"

namespace basalt::sched {
namespace {

TEST_CASE("ConfigStore: starts with the default and keeps the last good config", "[sched][conf]") {
  PluginRegistry plugins = NewInTreeRegistry();
  ActionRegistry actions = NewInTreeActionRegistry();
  ConfigStore store(&plugins, &actions);
  CHECK(store.Current().actions.size() == 3);
  REQUIRE(store.Reload("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n").ok());
  CHECK(store.Current().actions == std::vector<std::string>{"allocate"});
  absl::Status bad = store.Reload("actions: allocate\ntiers: [\n");
  CHECK(bad.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(MessageOf(bad)), Catch::Contains("not valid YAML"));
  CHECK(store.Current().actions == std::vector<std::string>{"allocate"});
  bad = store.Reload(
      "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrder: 3\n");
  CHECK(bad.code() == absl::StatusCode::kInvalidArgument);
  CHECK(store.Current().actions == std::vector<std::string>{"allocate"});
  // An unknown action is skipped, not a reason to keep the old file.
  REQUIRE(store.Reload("actions: allocate, shuffle, preempt\n").ok());
  CHECK(store.Current().actions == std::vector<std::string>{"allocate", "preempt"});
  CHECK(store.Current().skipped_actions == std::vector<std::string>{"shuffle"});
  CHECK(store.LoadFile("/nonexistent/volcano-scheduler.conf").code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace basalt::sched
