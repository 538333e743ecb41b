#pragma once
// Command-line options of vc-scheduler (Volcano's names where they exist; reference §2.3):
//
//   --scheduler-name NAME           repeatable; pods with this schedulerName    default volcano
//   --scheduler-conf PATH           config file, re-read when it changes        default built-in
//   --schedule-period DURATION      at most one cycle per period (Go syntax)    default 1s
//   --arrival-delay DURATION        a new pod or PodGroup is scheduled this long after it
//                                   arrives, not a period later; 0 = wait for the period
//                                   (Volcano's behaviour); a Basalt flag        default 20ms
//   --default-queue NAME            queue of PodGroups without spec.queue       default default
//   --percentage-nodes-to-find N    node sampling of allocate's predicate pass: % of the nodes
//                                   to find feasible; 0 = adaptive max(min%, 50 - nodes/125)
//                                                                               default 0
//   --minimum-feasible-nodes N      clusters up to N nodes are not sampled, and a pass never
//                                   looks for fewer than N feasible nodes       default 100
//   --minimum-percentage-nodes-to-find N   floor of the adaptive percentage     default 5
//                                   (see framework/node_sampling.h, docs/scheduler.md)
//   --bind-workers N                concurrent pods/binding requests            default 16
//   --status-workers N              concurrent status patches                   default 4
//   --node-selector key:value       accepted, not implemented yet (documented)
// plus the client flags (--kubeconfig, --master, --kube-api-qps, --kube-api-burst), the
// leader-election flags (common/ctrlkit/leader_election.h) and the runtime flags.

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/client/flags.h"

namespace basalt::sched::app {

struct SchedulerOptions {
  std::vector<std::string> scheduler_names;  // empty after parsing means {"volcano"}
  std::string scheduler_conf;
  std::string schedule_period = "1s";
  std::chrono::milliseconds period{1000};
  std::string arrival_delay_flag = "20ms";
  std::chrono::milliseconds arrival_delay{20};
  std::string default_queue = "default";
  int percentage_nodes_to_find = 0;
  int minimum_feasible_nodes = 100;
  int minimum_percentage_nodes_to_find = 5;
  int bind_workers = 16;
  int status_workers = 4;
  // --bare-pod-podgroups: a bare pod's binding also sets its group annotation (see
  // cache::ApiBinder); matches vc-controller-manager's flag of the same name.
  bool bare_pod_podgroups = true;
  std::vector<std::string> node_selector;

  void AddFlags(client::FlagSet& flags);
  // Checks values and fills `period`, `arrival_delay` and the default scheduler name.
  absl::Status Finish();
};

}  // namespace basalt::sched::app
