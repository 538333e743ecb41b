#pragma once
// QueueMutator (/queues/mutate): defaults of a scheduling.volcano.sh/v1beta1 Queue on CREATE:
// spec.weight 0 or unset -> 1, spec.reclaimable unset -> true, spec.parent unset -> `root`
// (except on root itself; Volcano defaults it in the queue controller), and legacy hierarchy
// annotations not rooted at `root` get the prefix `root/` (weights `1/`). Minimal JSON patch.
// Other operations are allowed unchanged. Stateless; thread-safe.

#include "webhook/json_patch.h"
#include "webhook/router.h"

namespace basalt::webhook {

// The patch that defaults `queue`; empty when nothing needs defaulting.
JsonPatch MutateQueue(const json::Value& queue);

class QueueMutator : public AdmissionHandler {
 public:
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
  // Looks at the object under review only.
  bool ReadsClusterState() const override { return false; }
};

}  // namespace basalt::webhook
