#include "common/api/task_topology.h"

#include <algorithm>
#include <set>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace basalt::api {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

class Reader {
 public:
  explicit Reader(const std::vector<std::string>& task_names) : task_names_(task_names) {}

  // One list of names ("ps,worker"): unknown and repeated names are errors of `annotation`.
  std::vector<std::string> List(std::string_view annotation, std::string_view list,
                                std::string_view what) {
    std::vector<std::string> names;
    for (std::string_view raw : Split(list, ',')) {
      std::string_view name = Trim(raw);
      if (name.empty()) continue;
      if (std::find(task_names_.begin(), task_names_.end(), name) == task_names_.end()) {
        if (task_names_.empty()) {
          // Only a PodGroup's pods can lack task names (a Job always has named tasks).
          Error(annotation, fmt::format("task \"{}\" is not a task of the job (none of its pods "
                                        "names a task in volcano.sh/task-spec)",
                                        name));
        } else {
          Error(annotation, fmt::format("task \"{}\" is not a task of the job (its tasks: {})",
                                        name, fmt::join(task_names_, ", ")));
        }
        continue;
      }
      if (std::find(names.begin(), names.end(), name) != names.end()) {
        Error(annotation,
              fmt::format("task \"{}\" appears twice in {} \"{}\"", name, what, Trim(list)));
        continue;
      }
      names.emplace_back(name);
    }
    return names;
  }

  std::vector<std::vector<std::string>> Groups(std::string_view annotation,
                                               std::string_view value) {
    std::vector<std::vector<std::string>> groups;
    for (std::string_view group : Split(value, ';')) {
      std::vector<std::string> names = List(annotation, group, "the group");
      if (!names.empty()) groups.push_back(std::move(names));
    }
    return groups;
  }

  void Error(std::string_view annotation, std::string message) {
    errors_.push_back(TaskTopologyError{annotation, std::move(message)});
  }
  std::vector<TaskTopologyError> TakeErrors() { return std::move(errors_); }

 private:
  const std::vector<std::string>& task_names_;
  std::vector<TaskTopologyError> errors_;
};

// The unordered pairs a group list relates: {a, b} for two tasks of one group, {a, a} for a
// group of one.
std::set<std::pair<std::string, std::string>> Pairs(
    const std::vector<std::vector<std::string>>& groups) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& g : groups) {
    if (g.size() == 1) out.emplace(g[0], g[0]);
    for (size_t i = 0; i < g.size(); ++i) {
      for (size_t j = i + 1; j < g.size(); ++j) out.emplace(std::minmax(g[i], g[j]));
    }
  }
  return out;
}

}  // namespace

std::string TaskTopologyError::ToString() const {
  return fmt::format("{}: {}", annotation, message);
}

std::optional<TaskTopologyParse> ParseTaskTopology(std::optional<std::string_view> affinity,
                                                   std::optional<std::string_view> anti_affinity,
                                                   std::optional<std::string_view> task_order,
                                                   const std::vector<std::string>& task_names) {
  if (!affinity && !anti_affinity && !task_order) return std::nullopt;
  Reader reader(task_names);
  TaskTopologyParse out;
  if (affinity) out.topology.affinity = reader.Groups(kTaskTopologyAffinityKey, *affinity);
  if (anti_affinity) {
    out.topology.anti_affinity = reader.Groups(kTaskTopologyAntiAffinityKey, *anti_affinity);
  }
  if (task_order) {
    out.topology.task_order = reader.List(kTaskTopologyTaskOrderKey, *task_order, "the order");
  }
  const auto together = Pairs(out.topology.affinity);
  for (const auto& pair : Pairs(out.topology.anti_affinity)) {
    if (together.count(pair) == 0) continue;
    if (pair.first == pair.second) {
      reader.Error(kTaskTopologyAntiAffinityKey,
                   fmt::format("task \"{}\" is alone in a group here and in {}: its pods cannot "
                               "both share a node and spread",
                               pair.first, kTaskTopologyAffinityKey));
    } else {
      reader.Error(kTaskTopologyAntiAffinityKey,
                   fmt::format("tasks \"{}\" and \"{}\" share a group here and in {}: they cannot "
                               "both share a node and avoid each other",
                               pair.first, pair.second, kTaskTopologyAffinityKey));
    }
  }
  out.errors = reader.TakeErrors();
  return out;
}

}  // namespace basalt::api
