#pragma once
// The scheduler configuration file (Volcano's volcano-scheduler.conf format):
//
//   actions: "enqueue, allocate, backfill"
//   tiers:
//   - plugins:
//     - name: priority
//     - name: gang
//       enablePreemptable: false
//   - plugins:
//     - name: binpack
//       arguments:
//         binpack.weight: 0.1
//   configurations:
//   - name: allocate
//     arguments: {predicateErrorCacheEnable: true}
//
// Parsing checks the shape; ValidateSchedulerConfig checks names against the registries.
// Value types; thread-compatible.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/conf/arguments.h"

namespace basalt::sched {

// A plugin entry of a tier: its name, arguments and the per-extension-point enable flags.
struct PluginOption {
  std::string name;
  Arguments arguments;
  // Flags present in the file, by their YAML key ("enablePreemptable", "enabledOverused").
  std::map<std::string, bool, std::less<>> flags;

  // Whether the extension point behind `flag_key` is enabled: the value in the file, else true
  // (every flag defaults to true, except enableHierarchy which defaults to false).
  bool Enabled(std::string_view flag_key) const;
};

// The YAML keys of the enable flags, with Volcano's own (inconsistent) spellings.
namespace flag {
inline constexpr std::string_view kJobOrder = "enableJobOrder";
inline constexpr std::string_view kHierarchy = "enableHierarchy";
inline constexpr std::string_view kJobReady = "enableJobReady";
inline constexpr std::string_view kJobPipelined = "enableJobPipelined";
inline constexpr std::string_view kTaskOrder = "enableTaskOrder";
inline constexpr std::string_view kPreemptable = "enablePreemptable";
inline constexpr std::string_view kReclaimable = "enableReclaimable";
inline constexpr std::string_view kPreemptive = "enablePreemptive";
inline constexpr std::string_view kQueueOrder = "enableQueueOrder";
inline constexpr std::string_view kClusterOrder = "enabledClusterOrder";
inline constexpr std::string_view kPredicate = "enablePredicate";
inline constexpr std::string_view kBestNode = "enableBestNode";
inline constexpr std::string_view kNodeOrder = "enableNodeOrder";
inline constexpr std::string_view kTargetJob = "enableTargetJob";
inline constexpr std::string_view kReservedNodes = "enableReservedNodes";
inline constexpr std::string_view kJobEnqueued = "enableJobEnqueued";
inline constexpr std::string_view kVictim = "enabledVictim";
inline constexpr std::string_view kJobStarving = "enableJobStarving";
inline constexpr std::string_view kOverused = "enabledOverused";
inline constexpr std::string_view kAllocatable = "enabledAllocatable";
inline constexpr std::string_view kHyperNodeOrder = "enabledHyperNodeOrder";
inline constexpr std::string_view kSubJobReady = "enabledSubJobReady";
inline constexpr std::string_view kSubJobPipelined = "enabledSubJobPipelined";
inline constexpr std::string_view kSubJobOrder = "enabledSubJobOrder";
inline constexpr std::string_view kHyperNodeGradient = "enabledHyperNodeGradient";
}  // namespace flag

struct Tier {
  std::vector<PluginOption> plugins;
};

// An entry of `configurations`: arguments for one action.
struct ActionConfiguration {
  std::string name;
  Arguments arguments;
};

struct SchedulerConfig {
  std::vector<std::string> actions;  // execution order
  std::vector<Tier> tiers;
  std::vector<ActionConfiguration> configurations;
  std::map<std::string, std::string> metrics;
  // Names the file gave that Basalt does not implement, removed by SkipUnknownNames (in file
  // order, each once): the rest of the file is in force without them.
  std::vector<std::string> skipped_actions;  // from actions and configurations
  std::vector<std::string> skipped_plugins;

  // The arguments configured for `action` (empty if none).
  Arguments ActionArguments(std::string_view action) const;
  bool HasAction(std::string_view action) const;
};

// Volcano's built-in configuration (used when no file is given): actions "enqueue, allocate,
// backfill"; tier 1 priority, gang, conformance; tier 2 overcommit, drf, predicates,
// proportion, nodeorder.
std::string_view DefaultSchedulerConfigYaml();
SchedulerConfig DefaultSchedulerConfig();

// Parses YAML text. Returns kInvalidArgument with the offending key or a YAML error position for
// malformed input, unknown top-level or plugin keys, or non-boolean flags.
absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml);

// Removes the actions, action configurations and plugins whose names are not in the registries
// (tiers left empty go too) and records the names in skipped_actions / skipped_plugins, as
// Volcano runs the rest of a file naming an action or plugin it lacks. Called by
// LoadSchedulerConfig before ValidateSchedulerConfig.
void SkipUnknownNames(SchedulerConfig& config,
                      const std::set<std::string, std::less<>>& known_actions,
                      const std::set<std::string, std::less<>>& known_plugins);

// Checks names and combinations: at least one action; every action and configuration name is
// in `known_actions`; every plugin name is in `known_plugins`; no plugin appears twice; drf with
// enableHierarchy is not in the same tier as proportion. Errors name the offender and list the
// known names.
absl::Status ValidateSchedulerConfig(const SchedulerConfig& config,
                                     const std::set<std::string, std::less<>>& known_actions,
                                     const std::set<std::string, std::less<>>& known_plugins);

}  // namespace basalt::sched
