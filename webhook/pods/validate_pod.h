#pragma once
// PodValidator (/pods/validate): on CREATE, for pods whose spec.schedulerName is one of the
// configured scheduler names, the disruption-budget annotations
// volcano.sh/jdb-min-available and volcano.sh/jdb-max-unavailable must each be a positive
// integer or a percentage from 1% to 99%, and not both be set; the GPU attribute annotations
// must be valid (gpu_attributes.h). Other pods are allowed untouched. Stateless; thread-safe.

#include <string>
#include <vector>

#include "webhook/router.h"
#include "webhook/validation.h"

namespace basalt::webhook {

ErrorList ValidatePodCreate(const json::Value& pod);

class PodValidator : public AdmissionHandler {
 public:
  explicit PodValidator(std::vector<std::string> scheduler_names)
      : scheduler_names_(std::move(scheduler_names)) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
  // Looks at the object under review only.
  bool ReadsClusterState() const override { return false; }

 private:
  std::vector<std::string> scheduler_names_;
};

}  // namespace basalt::webhook
