#include "webhook/jobflows/validate_jobflow.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/api/field_reader.h"
#include "common/api/flow.h"
#include "fmt/format.h"

namespace basalt::webhook {

ErrorList ValidateJobFlow(const json::Value& job_flow) {
  ErrorList errors;
  // Fields of the wrong type read as absent, with this validator's own wording where it
  // checks them; the reader's own error is not used.
  api::FieldReader reader(&job_flow, "");
  const std::string_view flow_name = reader.Child("metadata").View("name");
  const FieldPath spec_path("spec");
  api::FieldReader spec = reader.Child("spec");
  const FieldPath flows_path = spec_path.Child("flows");
  // One reader per position; an element that is not an object reads as empty. Empty too when
  // `flows` is absent or not a list.
  std::vector<api::FieldReader> flows = spec.Items("flows");
  if (flows.empty()) {
    errors.Invalid(flows_path, "Required value: at least one flow");
    return errors;
  }

  // Names first, so that targets can be checked against all of them.
  std::map<std::string, size_t, std::less<>> index;
  std::vector<std::string> names(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    const FieldPath name_path = flows_path.Index(i).Child("name");
    const std::optional<std::string_view> n = flows[i].OptView("name");
    if (!n.has_value() || n->empty()) {
      errors.Invalid(name_path, "Required value");
      continue;
    }
    const std::string name(*n);
    if (!IsDns1123Label(name)) {
      errors.Invalid(name_path, fmt::format("Invalid value: \"{}\": a JobTemplate name must be a "
                                            "DNS-1123 label (lower-case alphanumerics and '-')",
                                            name));
      continue;
    }
    const std::string job = api::FlowJobName(flow_name, name);
    if (!flow_name.empty() && !IsDns1123Label(job)) {
      errors.Invalid(name_path,
                     fmt::format("Invalid value: \"{}\": the Job name \"{}\" (<jobflow>-<flow>) "
                                 "must be a DNS-1123 label of at most 63 characters",
                                 name, job));
    }
    if (index.contains(name)) {
      errors.Invalid(name_path, fmt::format("Duplicate value: \"{}\"", name));
      continue;
    }
    index[name] = i;
    names[i] = name;
  }

  std::vector<std::vector<size_t>> edges(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    api::FieldReader dep = flows[i].Child("dependsOn");
    if (dep.value() == nullptr) continue;  // absent, null or not an object
    const FieldPath dep_path = flows_path.Index(i).Child("dependsOn");
    if (dep.Has("probe")) {
      errors.Invalid(dep_path.Child("probe"),
                     "Forbidden: probes (httpGetList, tcpSocketList, taskStatusList) are not "
                     "supported: Volcano declares but never evaluates them; use "
                     "dependsOn.targets");
    }
    // An element that is not a string reads as "" (and is not the name of a flow).
    dep.ForEachString("targets", [&](std::optional<std::string_view> t, size_t j) {
      const FieldPath t_path = dep_path.Child("targets").Index(j);
      const std::string_view target = t.value_or(std::string_view());
      auto it = index.find(target);
      if (it == index.end()) {
        errors.Invalid(t_path, fmt::format("Not found: \"{}\": not the name of a flow in "
                                           "spec.flows",
                                           target));
        return;
      }
      if (it->second == i) {
        errors.Invalid(
            t_path, fmt::format("Invalid value: \"{}\": a flow cannot depend on itself", target));
        return;
      }
      edges[i].push_back(it->second);
    });
  }

  // Cycle search (depth first; 0 unseen, 1 on the stack, 2 done).
  std::vector<int> mark(flows.size(), 0);
  std::vector<size_t> stack;
  std::vector<size_t> cycle;
  std::function<bool(size_t)> visit = [&](size_t v) {
    mark[v] = 1;
    stack.push_back(v);
    for (size_t w : edges[v]) {
      if (mark[w] == 1) {
        auto from = std::find(stack.begin(), stack.end(), w);
        cycle.assign(from, stack.end());
        cycle.push_back(w);
        return true;
      }
      if (mark[w] == 0 && visit(w)) return true;
    }
    stack.pop_back();
    mark[v] = 2;
    return false;
  };
  for (size_t v = 0; v < flows.size() && cycle.empty(); ++v) {
    if (mark[v] == 0) visit(v);
  }
  if (!cycle.empty()) {
    std::vector<std::string> path;
    for (size_t v : cycle) path.push_back(names[v]);
    errors.Invalid(flows_path, fmt::format("Invalid value: jobflow flow is not dag: {} depends "
                                           "on itself through dependsOn.targets ({})",
                                           names[cycle.front()], fmt::join(path, " -> ")));
  }

  // "?" stands for a value that is not a string.
  if (const std::optional<std::string_view> p = spec.ViewIfPresent("jobRetainPolicy", "?")) {
    const std::string_view v = *p;
    if (!v.empty() && v != api::kJobRetainPolicyRetain && v != api::kJobRetainPolicyDelete) {
      errors.Invalid(spec_path.Child("jobRetainPolicy"),
                     fmt::format("Unsupported value: \"{}\": supported values: \"retain\", "
                                 "\"delete\"",
                                 v));
    }
  }
  return errors;
}

AdmissionResponse JobFlowValidator::Handle(const AdmissionRequest& request) const {
  if ((request.operation == Operation::kCreate || request.operation == Operation::kUpdate) &&
      request.object != nullptr) {
    return ValidateJobFlow(*request.object).ToResponse();
  }
  return AdmissionResponse::Allow();
}

}  // namespace basalt::webhook
