#pragma once
// Plugin and Action interfaces, and the explicit registries that map config names to them
// (no static initialisers: the in-tree sets are built by NewInTreeRegistry() and
// NewInTreeActionRegistry()).
//
// A plugin is built fresh for every session from its config arguments; in OnSessionOpen it
// reads the snapshot and registers callbacks on the Session under its own name; OnSessionClose
// may write job conditions. An action runs once per session in config order.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/conf/arguments.h"

namespace basalt::sched {

class Session;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
  virtual void OnSessionOpen(Session& ssn) = 0;
  virtual void OnSessionClose(Session& /*ssn*/) {}
};

class Action {
 public:
  virtual ~Action() = default;
  virtual std::string_view Name() const = 0;
  virtual void Execute(Session& ssn) = 0;
};

// Builds a plugin from its arguments; returns kInvalidArgument for bad arguments.
using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<Plugin>>(const Arguments&)>;
using ActionFactory = std::function<std::unique_ptr<Action>()>;

// A name -> factory map. Not thread-safe for registration; const use is thread-compatible.
template <typename Factory>
class Registry {
 public:
  // Returns false (and keeps the old one) if `name` is already registered.
  bool Register(std::string name, Factory factory) {
    return factories_.emplace(std::move(name), std::move(factory)).second;
  }
  const Factory* Find(std::string_view name) const {
    auto it = factories_.find(name);
    return it == factories_.end() ? nullptr : &it->second;
  }
  std::set<std::string, std::less<>> Names() const {
    std::set<std::string, std::less<>> out;
    for (const auto& [name, f] : factories_) out.insert(name);
    return out;
  }

 private:
  std::map<std::string, Factory, std::less<>> factories_;
};

using PluginRegistry = Registry<PluginFactory>;
using ActionRegistry = Registry<ActionFactory>;

}  // namespace basalt::sched
