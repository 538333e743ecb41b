#pragma once
// PodGroupValidator (/podgroups/validate): on CREATE the PodGroup's queue (default
// `default`) must exist, be Open (a queue without status.state yet counts as Open) and be a
// leaf queue (not `root`, no child queues; Basalt also applies this Job rule to PodGroups), and
// networkTopology / subGroupPolicy[*].networkTopology must not set both highestTierAllowed
// and highestTierName. Thread-safe if the lister is.

#include "webhook/lister.h"
#include "webhook/router.h"
#include "webhook/validation.h"

namespace basalt::webhook {

ErrorList ValidatePodGroupCreate(const json::Value& podgroup, const ClusterLister& lister);

class PodGroupValidator : public AdmissionHandler {
 public:
  explicit PodGroupValidator(const ClusterLister& lister) : lister_(lister) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;

 private:
  const ClusterLister& lister_;
};

}  // namespace basalt::webhook
