#include "scheduler/app/options.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "common/client/flags.h"

namespace basalt::sched::app {
namespace {

using std::chrono::milliseconds;

absl::Status ParseAndFinish(SchedulerOptions& options, const std::vector<std::string>& args) {
  client::FlagSet flags("vc-scheduler");
  options.AddFlags(flags);
  if (absl::Status s = flags.Parse(args); !s.ok()) return s;
  return options.Finish();
}

TEST_CASE("SchedulerOptions: Volcano's defaults, durations parsed", "[options]") {
  SchedulerOptions o;
  REQUIRE(ParseAndFinish(o, {}).ok());
  CHECK(o.scheduler_names == std::vector<std::string>{"volcano"});
  CHECK(o.period == milliseconds(1000));
  CHECK(o.arrival_delay == milliseconds(20));
  CHECK(o.default_queue == "default");
  CHECK(o.bind_workers == 16);
  CHECK(o.status_workers == 4);
  CHECK(o.minimum_feasible_nodes == 100);
  CHECK(o.minimum_percentage_nodes_to_find == 5);

  SchedulerOptions p;
  REQUIRE(ParseAndFinish(
              p, {"--scheduler-name=a", "--scheduler-name", "b", "--schedule-period=1m30s",
                  "--arrival-delay=0", "--percentage-nodes-to-find=100", "--bind-workers", "1"})
              .ok());
  CHECK(p.scheduler_names == std::vector<std::string>{"a", "b"});
  CHECK(p.period == milliseconds(90000));
  CHECK(p.arrival_delay == milliseconds(0));
  CHECK(p.percentage_nodes_to_find == 100);
  CHECK(p.bind_workers == 1);
}

TEST_CASE("SchedulerOptions: each bad value names its flag and the rule", "[options]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--schedule-period=0s"}, "--schedule-period: must be at least 1ms, got 0s"},
      {{"--arrival-delay=-5ms"}, "--arrival-delay: must be at least 0ms, got -5ms"},
      {{"--schedule-period=1s", "--arrival-delay=2s"},
       "--arrival-delay: must be between 0 and --schedule-period (1s), got 2s"},
      {{"--bind-workers=0"}, "--bind-workers: must be at least 1, got 0"},
      {{"--status-workers=0"}, "--status-workers: must be at least 1, got 0"},
      {{"--percentage-nodes-to-find=101"},
       "--percentage-nodes-to-find: must be in [0, 100], got 101"},
      {{"--minimum-percentage-nodes-to-find=-1"},
       "--minimum-percentage-nodes-to-find: must be in [0, 100], got -1"},
      {{"--minimum-feasible-nodes=-1"}, "--minimum-feasible-nodes: must be at least 0, got -1"},
  };
  for (const auto& [args, message] : cases) {
    SchedulerOptions o;
    absl::Status s = ParseAndFinish(o, args);
    INFO(args[0]);
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(s.message()) == message);
  }
  SchedulerOptions o;
  absl::Status s = ParseAndFinish(o, {"--schedule-period=soon"});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).starts_with("--schedule-period: "));
}

}  // namespace
}  // namespace basalt::sched::app
