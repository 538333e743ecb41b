#pragma once
// QueueValidator (/queues/validate): admission rules for scheduling.volcano.sh/v1beta1 Queues.
//
// CREATE and UPDATE:
//   - capability, deserved and guarantee.resource hold valid, non-negative quantities;
//   - per resource guarantee <= deserved <= capability (where both sides are set; when
//     deserved is set at all it must cover every guaranteed resource);
//   - spec.weight, if set, is in 1..65535;
//   - status.state, if set, is Open or Closed (an UPDATE may also keep the old state);
//   - legacy hierarchy annotations have as many weights as path segments, weights > 0;
//   - on CREATE or a parent change: the parent exists, is not the queue itself, and the
//     hierarchy stays within --max-queue-depth; capability <= the nearest ancestor's
//     capability per resource;
//   - on CREATE or a change of parent, capability, deserved or guarantee (per resource, for
//     the resources the parent sets): the guarantees and the deserved of a parent's children
//     add up to at most the parent's; and this queue's guarantee/deserved cover the sum of its
//     children's, its capability is not below any child's;
//   - with root protection, `root`'s capability, deserved and guarantee never change.
// DELETE: `default` and `root` are refused, as are queues with child queues and (Basalt's
// stricter choice, so running work is never orphaned) queues that still have PodGroups or
// Jobs; the message says how many.
//
// Deliberate differences from Volcano: an UPDATE that keeps a Closing/Unknown state is allowed
// (Volcano refuses every edit of a Closing queue, issue #3517); deletion needs an empty queue.
// Thread-safe if the lister is.

#include "webhook/admission_router.h"
#include "webhook/lister.h"
#include "webhook/router.h"
#include "webhook/validation.h"

namespace basalt::webhook {

ErrorList ValidateQueueCreateOrUpdate(const json::Value* old_queue, const json::Value& queue,
                                      const ClusterLister& lister, const AdmissionOptions& options);
ErrorList ValidateQueueDelete(std::string_view name, const ClusterLister& lister);

class QueueValidator : public AdmissionHandler {
 public:
  QueueValidator(const ClusterLister& lister, AdmissionOptions options)
      : lister_(lister), options_(std::move(options)) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;

 private:
  const ClusterLister& lister_;
  AdmissionOptions options_;
};

}  // namespace basalt::webhook
