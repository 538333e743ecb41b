#include "scheduler/conf/config.h"

#include <algorithm>
#include <cstdlib>

#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace basalt::sched {

namespace {

constexpr std::string_view kFlagKeys[] = {
    flag::kJobOrder,         flag::kHierarchy,    flag::kJobReady,        flag::kJobPipelined,
    flag::kTaskOrder,        flag::kPreemptable,  flag::kReclaimable,     flag::kPreemptive,
    flag::kQueueOrder,       flag::kClusterOrder, flag::kPredicate,       flag::kBestNode,
    flag::kNodeOrder,        flag::kTargetJob,    flag::kReservedNodes,   flag::kJobEnqueued,
    flag::kVictim,           flag::kJobStarving,  flag::kOverused,        flag::kAllocatable,
    flag::kHyperNodeOrder,   flag::kSubJobReady,  flag::kSubJobPipelined, flag::kSubJobOrder,
    flag::kHyperNodeGradient};

constexpr std::string_view kDefaultYaml = R"(actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: gpuattributes
  - name: predicates
  - name: proportion
  - name: nodeorder
)";

std::string Trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string Join(const std::set<std::string, std::less<>>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

absl::Status Invalid(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

// Flattens a YAML arguments map. Scalars keep their text; nested values keep their YAML dump.
absl::StatusOr<Arguments> ParseArguments(const YAML::Node& node, std::string_view where) {
  Arguments args;
  if (!node || node.IsNull()) return args;
  if (!node.IsMap()) return Invalid(fmt::format("{}: arguments must be a map", where));
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (v.IsScalar()) {
      args.Set(key, v.Scalar());
    } else if (v.IsNull()) {
      args.Set(key, "");
    } else {
      YAML::Emitter e;
      e << YAML::Flow << v;
      args.Set(key, e.c_str());
    }
  }
  return args;
}

absl::StatusOr<bool> ParseFlag(const YAML::Node& v, std::string_view key, std::string_view plugin) {
  Arguments tmp;
  tmp.Set(std::string(key), v.IsScalar() ? v.Scalar() : "");
  auto b = tmp.GetBool(key, true);
  if (!b.ok()) {
    return Invalid(fmt::format("plugin {}: {} must be true or false", plugin, key));
  }
  return *b;
}

absl::StatusOr<SchedulerConfig> ParseNode(const YAML::Node& root) {
  SchedulerConfig config;
  if (!root || root.IsNull()) return Invalid("scheduler config is empty");
  if (!root.IsMap()) return Invalid("scheduler config must be a YAML map");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (key != "actions" && key != "tiers" && key != "configurations" && key != "metrics") {
      return Invalid(fmt::format(
          "unknown top-level key \"{}\" (expected actions, tiers, configurations, metrics)", key));
    }
  }
  const YAML::Node& actions = root["actions"];
  if (actions && !actions.IsNull()) {
    if (!actions.IsScalar()) {
      return Invalid(
          "actions must be a comma-separated string, e.g. \"enqueue, allocate, backfill\"");
    }
    const std::string& text = actions.Scalar();
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      std::string name = Trim(std::string_view(text).substr(start, comma - start));
      if (!name.empty()) config.actions.push_back(std::move(name));
      start = comma + 1;
    }
  }
  const YAML::Node& tiers = root["tiers"];
  if (tiers && !tiers.IsNull()) {
    if (!tiers.IsSequence()) return Invalid("tiers must be a list of {plugins: [...]}");
    for (size_t t = 0; t < tiers.size(); ++t) {
      const YAML::Node& tier_node = tiers[t];
      if (!tier_node.IsMap())
        return Invalid(fmt::format("tiers[{}] must be a map with plugins", t));
      Tier tier;
      const YAML::Node& plugins = tier_node["plugins"];
      if (!plugins || !plugins.IsSequence()) {
        return Invalid(fmt::format("tiers[{}].plugins must be a list", t));
      }
      for (size_t p = 0; p < plugins.size(); ++p) {
        const YAML::Node& pn = plugins[p];
        if (!pn.IsMap()) return Invalid(fmt::format("tiers[{}].plugins[{}] must be a map", t, p));
        PluginOption option;
        const YAML::Node& name = pn["name"];
        if (!name || !name.IsScalar() || name.Scalar().empty()) {
          return Invalid(fmt::format("tiers[{}].plugins[{}] has no name", t, p));
        }
        option.name = name.Scalar();
        for (const auto& kv : pn) {
          const std::string key = kv.first.as<std::string>();
          if (key == "name") continue;
          if (key == "arguments") {
            auto args = ParseArguments(kv.second, fmt::format("plugin {}", option.name));
            if (!args.ok()) return args.status();
            option.arguments = *std::move(args);
            continue;
          }
          if (std::find(std::begin(kFlagKeys), std::end(kFlagKeys), key) == std::end(kFlagKeys)) {
            return Invalid(fmt::format("plugin {}: unknown key \"{}\"", option.name, key));
          }
          auto value = ParseFlag(kv.second, key, option.name);
          if (!value.ok()) return value.status();
          option.flags[key] = *value;
        }
        tier.plugins.push_back(std::move(option));
      }
      config.tiers.push_back(std::move(tier));
    }
  }
  const YAML::Node& confs = root["configurations"];
  if (confs && !confs.IsNull()) {
    if (!confs.IsSequence()) return Invalid("configurations must be a list of {name, arguments}");
    for (size_t i = 0; i < confs.size(); ++i) {
      const YAML::Node& c = confs[i];
      if (!c.IsMap() || !c["name"] || !c["name"].IsScalar()) {
        return Invalid(fmt::format("configurations[{}] needs a name", i));
      }
      ActionConfiguration ac;
      ac.name = c["name"].Scalar();
      auto args = ParseArguments(c["arguments"], fmt::format("configuration {}", ac.name));
      if (!args.ok()) return args.status();
      ac.arguments = *std::move(args);
      config.configurations.push_back(std::move(ac));
    }
  }
  const YAML::Node& metrics = root["metrics"];
  if (metrics && !metrics.IsNull()) {
    if (!metrics.IsMap()) return Invalid("metrics must be a map of strings");
    for (const auto& kv : metrics) {
      config.metrics[kv.first.as<std::string>()] = kv.second.IsScalar() ? kv.second.Scalar() : "";
    }
  }
  return config;
}

}  // namespace

bool PluginOption::Enabled(std::string_view flag_key) const {
  auto it = flags.find(flag_key);
  if (it != flags.end()) return it->second;
  return flag_key != flag::kHierarchy;
}

Arguments SchedulerConfig::ActionArguments(std::string_view action) const {
  for (const auto& c : configurations) {
    if (c.name == action) return c.arguments;
  }
  return Arguments();
}

bool SchedulerConfig::HasAction(std::string_view action) const {
  return std::find(actions.begin(), actions.end(), action) != actions.end();
}

std::string_view DefaultSchedulerConfigYaml() { return kDefaultYaml; }

SchedulerConfig DefaultSchedulerConfig() {
  auto config = ParseSchedulerConfig(kDefaultYaml);
  // The built-in text is a constant; failing to parse it is a programming error.
  if (!config.ok()) std::abort();
  return *std::move(config);
}

absl::StatusOr<SchedulerConfig> ParseSchedulerConfig(std::string_view yaml) {
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    return ParseNode(root);
  } catch (const YAML::Exception& e) {
    return Invalid(fmt::format("scheduler config is not valid YAML: {}", e.what()));
  }
}

void SkipUnknownNames(SchedulerConfig& config,
                      const std::set<std::string, std::less<>>& known_actions,
                      const std::set<std::string, std::less<>>& known_plugins) {
  auto note = [](std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  };
  std::erase_if(config.actions, [&](const std::string& a) {
    if (known_actions.count(a) != 0) return false;
    note(config.skipped_actions, a);
    return true;
  });
  std::erase_if(config.configurations, [&](const ActionConfiguration& c) {
    if (known_actions.count(c.name) != 0) return false;
    note(config.skipped_actions, c.name);
    return true;
  });
  for (Tier& tier : config.tiers) {
    std::erase_if(tier.plugins, [&](const PluginOption& p) {
      if (known_plugins.count(p.name) != 0) return false;
      note(config.skipped_plugins, p.name);
      return true;
    });
  }
  std::erase_if(config.tiers, [](const Tier& t) { return t.plugins.empty(); });
}

absl::Status ValidateSchedulerConfig(const SchedulerConfig& config,
                                     const std::set<std::string, std::less<>>& known_actions,
                                     const std::set<std::string, std::less<>>& known_plugins) {
  if (config.actions.empty()) {
    if (!config.skipped_actions.empty()) {
      std::set<std::string, std::less<>> skipped(config.skipped_actions.begin(),
                                                 config.skipped_actions.end());
      return Invalid(fmt::format("scheduler config has no known action (skipped: {}; known: {})",
                                 Join(skipped), Join(known_actions)));
    }
    return Invalid("scheduler config has no actions");
  }
  for (const auto& a : config.actions) {
    if (known_actions.count(a) == 0) {
      return Invalid(
          fmt::format("unknown action \"{}\" (known actions: {})", a, Join(known_actions)));
    }
  }
  for (const auto& c : config.configurations) {
    if (known_actions.count(c.name) == 0) {
      return Invalid(fmt::format("configurations: unknown action \"{}\" (known actions: {})",
                                 c.name, Join(known_actions)));
    }
    if (c.name == "gangpreempt" || c.name == "gangreclaim") {
      // The arguments the gang actions read (scheduler/actions/gang_eviction.h).
      auto prefix = [&c](const absl::Status& s) {
        return Invalid(fmt::format("configurations: {}: {}", c.name, std::string(s.message())));
      };
      if (auto v = c.arguments.GetInt("maxDomains", 8); !v.ok()) return prefix(v.status());
      if (auto v = c.arguments.GetBool("allowWholeBundle", true); !v.ok()) {
        return prefix(v.status());
      }
      const std::string policy = c.arguments.GetString("victimOrderPolicy", "safe-first");
      if (policy != "safe-first" && policy != "priority-first") {
        return Invalid(fmt::format(
            "configurations: {}: victimOrderPolicy must be safe-first or priority-first, got "
            "\"{}\"",
            c.name, policy));
      }
    }
  }
  std::set<std::string, std::less<>> seen;
  // hdrf (drf with enableHierarchy) orders queues: refused where it could not (docs/scheduler.md).
  bool queue_order_before_hdrf = false;
  std::string queue_orderer;
  for (size_t t = 0; t < config.tiers.size(); ++t) {
    bool has_proportion = false;
    bool has_hdrf = false;
    for (const auto& p : config.tiers[t].plugins) {
      if (p.name == "drf" && p.Enabled(flag::kHierarchy)) {
        if (queue_order_before_hdrf) {
          return Invalid(fmt::format(
              "tiers[{}]: drf with enableHierarchy comes after {}, whose queue order decides "
              "first (the first plugin with an opinion orders the queues), so the hierarchy "
              "would not order them: list drf before {} or set enableQueueOrder: false on {}",
              t, queue_orderer, queue_orderer, queue_orderer));
        }
        for (const auto& tier : config.tiers) {
          for (const auto& other : tier.plugins) {
            if (other.name == "proportion") {
              return Invalid(
                  "drf with enableHierarchy cannot be used together with proportion (in any "
                  "tier): proportion's flat weighted shares and the hierarchy would order the "
                  "queues against each other; use capacity for quotas with hdrf");
            }
          }
        }
      }
      if ((p.name == "capacity" || p.name == "proportion") && p.Enabled(flag::kQueueOrder) &&
          !queue_order_before_hdrf) {
        queue_order_before_hdrf = true;
        queue_orderer = p.name;
      }
      if (known_plugins.count(p.name) == 0) {
        return Invalid(fmt::format("unknown plugin \"{}\" in tiers[{}] (known plugins: {})", p.name,
                                   t, Join(known_plugins)));
      }
      if (!seen.insert(p.name).second) {
        return Invalid(fmt::format("plugin \"{}\" is configured more than once", p.name));
      }
      if (p.name == "proportion") has_proportion = true;
      if (p.name == "drf" && p.Enabled(flag::kHierarchy)) has_hdrf = true;
    }
    if (has_proportion && has_hdrf) {
      return Invalid(fmt::format(
          "tiers[{}]: drf with enableHierarchy cannot be used together with proportion", t));
    }
  }
  return absl::OkStatus();
}

}  // namespace basalt::sched
