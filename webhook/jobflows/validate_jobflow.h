#pragma once
// JobFlowValidator (/jobflows/validate): admission rules for flow.volcano.sh/v1alpha1
// JobFlows, on CREATE and UPDATE. Volcano v1.15 checks only that the flows form a DAG; Basalt
// also refuses what its controller would not run. Each message starts with the field path:
//   - spec.flows: at least one flow; the dependencies form no cycle ("jobflow flow is not
//     dag", Volcano's words, with the cycle);
//   - spec.flows[i].name: required, a DNS-1123 label, unique, and "<jobflow>-<name>" (the
//     Job's name) a DNS-1123 label too;
//   - spec.flows[i].dependsOn.targets[j]: names another flow of spec.flows;
//   - spec.flows[i].dependsOn.probe: refused (Volcano declares it but never evaluates it);
//   - spec.jobRetainPolicy: retain or delete.
// A flow naming a JobTemplate that does not exist (yet) is admitted, as in Volcano: the
// controller creates its Job once the template exists and reports TemplateNotFound meanwhile.
// Thread-safe (no state).

#include "webhook/router.h"
#include "webhook/validation.h"

namespace basalt::webhook {

ErrorList ValidateJobFlow(const json::Value& job_flow);

class JobFlowValidator : public AdmissionHandler {
 public:
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
};

}  // namespace basalt::webhook
