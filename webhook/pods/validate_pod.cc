#include "webhook/pods/validate_pod.h"

#include <algorithm>
#include <charconv>

#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"
#include "fmt/format.h"
#include "webhook/pods/gpu_attributes.h"

namespace basalt::webhook {
namespace {

bool IsPositiveIntOrPercent(std::string_view v) {
  bool percent = !v.empty() && v.back() == '%';
  if (percent) v.remove_suffix(1);
  if (v.empty() || v.front() == '+' || v.front() == '-') return false;
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size()) return false;
  return percent ? (n >= 1 && n <= 99) : n > 0;
}

}  // namespace

ErrorList ValidatePodCreate(const json::Value& pod) {
  ErrorList errors;
  // Fields of the wrong type read as absent (the API server's schema refuses them first).
  api::FieldReader reader(&pod, "");
  api::FieldReader metadata = reader.Child("metadata");
  ValidateGpuAttributeAnnotations(metadata.value(), FieldPath("metadata"), errors);
  api::FieldReader annotations = metadata.Child("annotations");
  if (annotations.value() == nullptr) return errors;
  const FieldPath path = FieldPath("metadata").Child("annotations");
  auto min_available = annotations.OptView(api::kJdbMinAvailableKey);
  auto max_unavailable = annotations.OptView(api::kJdbMaxUnavailableKey);
  if (min_available && max_unavailable) {
    errors.Invalid(path, fmt::format("{} and {} can not be set at the same time",
                                     api::kJdbMinAvailableKey, api::kJdbMaxUnavailableKey));
  }
  for (auto [key, value] : {std::pair{api::kJdbMinAvailableKey, min_available},
                            std::pair{api::kJdbMaxUnavailableKey, max_unavailable}}) {
    if (value && !IsPositiveIntOrPercent(*value)) {
      errors.Invalid(path.Key(key), fmt::format("invalid value \"{}\": must be a positive integer "
                                                "or a percentage between 1% and 99%",
                                                *value));
    }
  }
  return errors;
}

AdmissionResponse PodValidator::Handle(const AdmissionRequest& request) const {
  if (request.operation != Operation::kCreate || request.object == nullptr) {
    return AdmissionResponse::Allow();
  }
  api::FieldReader pod(request.object, "");
  std::string_view scheduler = pod.Child("spec").View("schedulerName");
  if (std::find(scheduler_names_.begin(), scheduler_names_.end(), scheduler) ==
      scheduler_names_.end()) {
    return AdmissionResponse::Allow();
  }
  return ValidatePodCreate(*request.object).ToResponse();
}

}  // namespace basalt::webhook
