#pragma once
// The PodGroup controller gives pods that Basalt schedules but no Job manages a PodGroup of
// their own: for a pod whose spec.schedulerName is one of ControllerContext::scheduler_names
// and that carries no scheduling.k8s.io/group-name annotation, it creates PodGroup
// `podgroup-<controller owner UID>` (or `podgroup-<pod UID>` for a bare pod) with minMember from
// the owner's scheduling.volcano.sh/group-min-member annotation (default 1), the queue from the
// pod's scheduling.volcano.sh/queue-name annotation, and then annotates the pod with the
// PodGroup name. Pods of other schedulers are ignored.
//
// With `bare_pod_podgroups` false (--bare-pod-podgroups=false) it leaves alone bare pods (no
// controller owner) without a scheduling.volcano.sh/group-min-member annotation: the scheduler
// schedules those through a shadow job (scheduler/cache/cluster_state.h) and no PodGroup, no
// annotation, no PodGroup status write is made for them. Owned pods and pods declaring a gang
// get their PodGroup either way.
//
// Thread-safety and ownership: see controllers/app/controller.h.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/client/client.h"
#include "common/informer/store.h"
#include "controllers/app/controller.h"

namespace basalt::controllers {

// What the controller decides for one pod, exposed for unit tests: nullopt when the pod needs
// no PodGroup. `owner_annotations` are those of the pod's controller owner (empty if none).
struct BarePodGroupPlan {
  std::string name;  // podgroup-<uid>
  std::string pod_group_json;
  std::string pod_patch_json;
};
std::optional<BarePodGroupPlan> PlanBarePodGroup(
    const json::Value& pod, const std::vector<std::string>& scheduler_names,
    const std::map<std::string, std::string>& owner_annotations, bool bare_pod_podgroups = true);

// Reconciles one pod key ("namespace/name") against `pods`.
absl::Status ReconcileBarePod(client::Client& client, const informer::Store& pods,
                              const std::vector<std::string>& scheduler_names,
                              const std::string& key, bool bare_pod_podgroups = true);

absl::StatusOr<std::unique_ptr<Controller>> NewPodGroupController(const ControllerContext& ctx);

}  // namespace basalt::controllers
