#include "scheduler/app/options.h"

#include "common/runtime/flags.h"
#include "fmt/format.h"

namespace basalt::sched::app {

void SchedulerOptions::AddFlags(client::FlagSet& flags) {
  flags.StringArray("scheduler-name", &scheduler_names,
                    "pods with this schedulerName are scheduled (repeatable; default volcano)");
  flags.String("scheduler-conf", &scheduler_conf,
               "scheduler configuration file (re-read when it changes); built-in default if empty");
  flags.String("schedule-period", &schedule_period,
               "at most one scheduling cycle per period (Go duration)");
  flags.String("arrival-delay", &arrival_delay_flag,
               "a new pod or PodGroup is scheduled this long after it arrives instead of a period "
               "later (Go duration; 0 = wait for --schedule-period)");
  flags.String("default-queue", &default_queue, "queue of PodGroups that name none");
  flags.Int("percentage-nodes-to-find", &percentage_nodes_to_find,
            "percentage of the nodes allocate's predicates look for as feasible before scoring; "
            "0 = adaptive (50 - nodes/125, at least --minimum-percentage-nodes-to-find)");
  flags.Int("minimum-feasible-nodes", &minimum_feasible_nodes,
            "clusters of at most this many nodes are not sampled; a pass never looks for fewer "
            "feasible nodes");
  flags.Int("minimum-percentage-nodes-to-find", &minimum_percentage_nodes_to_find,
            "lower bound of the adaptive percentage of nodes to find");
  flags.Int("bind-workers", &bind_workers, "concurrent pods/binding requests");
  flags.Int("status-workers", &status_workers, "concurrent status patches");
  flags.Bool("bare-pod-podgroups", &bare_pod_podgroups,
             "a bare pod's binding also sets scheduling.k8s.io/group-name to the PodGroup "
             "vc-controller-manager makes for it (podgroup-<pod uid>); set as that controller's "
             "--bare-pod-podgroups");
  flags.StringList("node-selector", &node_selector,
                   "accepted for Volcano compatibility, not implemented (all nodes are used)");
}

absl::Status SchedulerOptions::Finish() {
  if (scheduler_names.empty()) scheduler_names = {"volcano"};
  absl::StatusOr<std::chrono::milliseconds> p =
      runtime::ParseDurationFlag("schedule-period", schedule_period, std::chrono::milliseconds(1));
  if (!p.ok()) return p.status();
  period = *p;
  absl::StatusOr<std::chrono::milliseconds> a =
      runtime::ParseDurationFlag("arrival-delay", arrival_delay_flag);
  if (!a.ok()) return a.status();
  arrival_delay = *a;
  if (arrival_delay > period) {
    return absl::InvalidArgumentError(
        fmt::format("--arrival-delay: must be between 0 and --schedule-period ({}), got {}",
                    schedule_period, arrival_delay_flag));
  }
  return runtime::FirstError({
      runtime::CheckAtLeast("bind-workers", bind_workers, 1),
      runtime::CheckAtLeast("status-workers", status_workers, 1),
      runtime::CheckInRange("percentage-nodes-to-find", percentage_nodes_to_find, 0, 100),
      runtime::CheckInRange("minimum-percentage-nodes-to-find", minimum_percentage_nodes_to_find, 0,
                            100),
      runtime::CheckAtLeast("minimum-feasible-nodes", minimum_feasible_nodes, 0),
  });
}

}  // namespace basalt::sched::app
