#pragma once
// The PodGroup controller gives pods that Basalt schedules but no Job manages a PodGroup of
// their own: for a pod whose spec.schedulerName is one of ControllerContext::scheduler_names
// and that carries no scheduling.k8s.io/group-name annotation, it creates PodGroup
// `podgroup-<controller owner UID>` (or `podgroup-<pod UID>` for a bare pod) with minMember from
// the owner's scheduling.volcano.sh/group-min-member annotation (default 1), the queue from the
// pod's scheduling.volcano.sh/queue-name annotation, and then annotates the pod with the
// PodGroup name. Pods of other schedulers are ignored.
//
// A bare pod (no controller owner, no group-min-member annotation) gets its PodGroup only once
// the scheduler has placed it (spec.nodeName set), or reported it unschedulable
// (PodScheduled=False), or after BarePodWait::unbound_wait unbound (issue 17): the scheduler
// places it through a shadow job without the PodGroup, so the PodGroup is made out of the
// scheduling pipeline and its first status write (the scheduler's) is its final one. Its
// group annotation normally comes with the binding (vc-scheduler --bare-pod-podgroups), so the
// controller patches the pod only when the annotation is still missing. Deliberately differs
// from Volcano (which makes the PodGroup at once and never again): a bare pod annotated
// podgroup-<its uid> whose PodGroup is missing gets it, so a PodGroup deleted while its pod
// lives comes back at the pod's next change.
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
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/client/client.h"
#include "common/informer/store.h"
#include "common/util/clock.h"
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

// The keys ("namespace/name") of the PodGroups a controller created that its informer has not
// shown yet, so that a pod change arriving in between sends no second POST. Thread-safe.
class CreatedPodGroups {
 public:
  void Add(const std::string& key);
  void Erase(const std::string& key);
  bool Contains(const std::string& key) const;

 private:
  mutable absl::Mutex mu_;
  std::set<std::string> keys_ ABSL_GUARDED_BY(mu_);
};

// When a bare pod's PodGroup is made (see the file comment).
struct BarePodWait {
  // The PodGroups the controller sees, and those it created since; a PodGroup found in either
  // is not created again. nullptr: not looked up (every reconcile that needs one sends the
  // POST).
  const informer::Store* pod_groups = nullptr;
  CreatedPodGroups* created = nullptr;
  Clock* clock = nullptr;  // nullptr: Clock::Real()
  // A bare pod neither bound nor unschedulable gets its PodGroup this long after its
  // creationTimestamp (at once if it has none).
  Clock::Duration unbound_wait = std::chrono::seconds(10);
};

// Reconciles one pod key ("namespace/name") against `pods`. OK with a delay: reconcile the key
// again after it (a bare pod still waiting for its placement).
absl::StatusOr<std::optional<Clock::Duration>> ReconcileBarePod(
    client::Client& client, const informer::Store& pods,
    const std::vector<std::string>& scheduler_names, const std::string& key,
    bool bare_pod_podgroups = true, const BarePodWait& wait = {});

absl::StatusOr<std::unique_ptr<Controller>> NewPodGroupController(const ControllerContext& ctx);

}  // namespace basalt::controllers
