#pragma once
// PodGroupMutator (/podgroups/mutate): on CREATE, a PodGroup whose spec.queue is unset or
// `default` is moved to the queue named by its namespace's annotation
// scheduling.volcano.sh/queue-name, if any. Thread-safe if the lister is.

#include "webhook/json_patch.h"
#include "webhook/lister.h"
#include "webhook/router.h"

namespace basalt::webhook {

// The patch for `podgroup` in namespace `ns`; empty when nothing changes.
JsonPatch MutatePodGroup(const json::Value& podgroup, std::string_view ns,
                         const ClusterLister& lister);

class PodGroupMutator : public AdmissionHandler {
 public:
  explicit PodGroupMutator(const ClusterLister& lister) : lister_(lister) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;

 private:
  const ClusterLister& lister_;
};

}  // namespace basalt::webhook
