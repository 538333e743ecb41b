#pragma once
// Task topology of a Volcano Job (Volcano's task-topology plugin): three annotations on the Job,
// copied by the job controller to its PodGroup, that name the job's tasks (roles):
//
//   volcano.sh/task-topology-affinity: "ps,worker;ps,evaluator"
//       groups separated by ';', task names by ','; the tasks of a group should share a node
//       (a group of one task: that task's pods should share a node);
//   volcano.sh/task-topology-anti-affinity: "ps;worker,chief"
//       the tasks of a group should not share a node (a group of one: its pods spread);
//   volcano.sh/task-topology-task-order: "ps,worker"
//       the order in which the tasks are placed.
//
// ParseTaskTopology is the one reading of these values, used by the webhook (to refuse a Job)
// and by the scheduler (to explain a PodGroup that bypassed the webhook), so both apply the same
// rules. Empty entries ("ps,,worker", a trailing ';') are skipped, as Volcano does; spaces
// around names are trimmed (Basalt: Volcano keeps them and then finds no such task).
//
// Plain values; ParseTaskTopology is pure and thread-safe.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace basalt::api {

inline constexpr std::string_view kTaskTopologyAffinityKey = "volcano.sh/task-topology-affinity";
inline constexpr std::string_view kTaskTopologyAntiAffinityKey =
    "volcano.sh/task-topology-anti-affinity";
inline constexpr std::string_view kTaskTopologyTaskOrderKey = "volcano.sh/task-topology-task-order";

struct TaskTopology {
  std::vector<std::vector<std::string>> affinity;       // groups of task names, none empty
  std::vector<std::vector<std::string>> anti_affinity;  // groups of task names, none empty
  std::vector<std::string> task_order;                  // first placed first
};

// One broken rule: the annotation it is in and what is wrong, e.g. {kTaskTopologyAffinityKey,
// "task \"wroker\" is not a task of the job (its tasks: ps, worker)"}.
struct TaskTopologyError {
  std::string_view annotation;
  std::string message;
  // "<annotation>: <message>".
  std::string ToString() const;
};

struct TaskTopologyParse {
  TaskTopology topology;
  std::vector<TaskTopologyError> errors;  // empty: the topology is valid
};

// Reads the three annotation values (nullopt: the annotation is absent). `task_names` are the
// job's tasks, in the job's order (for messages). The rules:
//   - every name is one of `task_names`;
//   - a name appears at most once in one group, and at most once in the task order;
//   - two tasks (or one task with itself) are not both in an affinity group and in an
//     anti-affinity group: the two would cancel out.
std::optional<TaskTopologyParse> ParseTaskTopology(std::optional<std::string_view> affinity,
                                                   std::optional<std::string_view> anti_affinity,
                                                   std::optional<std::string_view> task_order,
                                                   const std::vector<std::string>& task_names);

}  // namespace basalt::api
