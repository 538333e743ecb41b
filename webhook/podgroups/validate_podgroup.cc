#include "webhook/podgroups/validate_podgroup.h"

#include "common/api/codec.h"
#include "common/api/vocabulary.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook {

ErrorList ValidatePodGroupCreate(const json::Value& podgroup, const ClusterLister& lister) {
  ErrorList errors;
  // Paths are built only for errors, except this short one (no formatting).
  const FieldPath queue_path("spec.queue");
  // Read through the shared model; a spec.queue of the wrong type reads as absent (the API
  // server's schema refuses it before admission).
  api::FieldReader reader(&podgroup, "");
  api::FieldReader spec = reader.Child("spec");
  std::string queue_name = spec.String("queue");
  if (queue_name.empty()) queue_name = api::kDefaultQueue;
  if (std::optional<QueueInfo> queue =
          LookUpQueue(queue_name, "queue", queue_path, lister, errors)) {
    const std::string state = queue->state.empty() ? std::string(api::kQueueOpen) : queue->state;
    if (state != api::kQueueOpen) {
      errors.Forbidden(queue_path,
                       fmt::format("can only submit PodGroup to queue with state `Open`, queue "
                                   "`{}` status is `{}`.",
                                   queue_name, state));
    }
    // As for Jobs: work goes to leaf queues only (Volcano checks this for Jobs only; a
    // PodGroup in a parent queue would never be scheduled by the hierarchy-aware plugins).
    if (queue_name == api::kRootQueue) {
      errors.Forbidden(queue_path, "can not submit PodGroup to root queue");
    } else if (std::vector<std::string> children = lister.ChildQueues(queue_name);
               !children.empty()) {
      std::string list;
      for (const std::string& c : children) list += (list.empty() ? "" : ", ") + c;
      errors.Forbidden(queue_path,
                       fmt::format("can only submit PodGroup to leaf queue, queue `{}` has {} "
                                   "child queues ({})",
                                   queue_name, children.size(), list));
    }
  }
  const FieldPath spec_path("spec");
  if (const json::Value* t = spec.Member("networkTopology"); NetworkTopologyConflicts(t)) {
    ValidateNetworkTopology(t, spec_path.Child("networkTopology"), errors);
  }
  for (const api::FieldReader& group : spec.Elements("subGroupPolicy")) {
    if (const json::Value* t = group.Member("networkTopology"); NetworkTopologyConflicts(t)) {
      ValidateNetworkTopology(t,
                              spec_path.Child("subGroupPolicy")
                                  .Index(static_cast<size_t>(group.index()))
                                  .Child("networkTopology"),
                              errors);
    }
  }
  return errors;
}

AdmissionResponse PodGroupValidator::Handle(const AdmissionRequest& request) const {
  if (request.operation != Operation::kCreate || request.object == nullptr) {
    return AdmissionResponse::Allow();
  }
  return ValidatePodGroupCreate(*request.object, lister_).ToResponse();
}

}  // namespace basalt::webhook
