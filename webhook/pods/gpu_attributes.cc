#include "webhook/pods/gpu_attributes.h"

#include <string>
#include <utility>
#include <vector>

#include "common/api/gpu_attributes.h"

namespace basalt::webhook {

void ValidateGpuAttributeAnnotations(const json::Value* metadata, const FieldPath& metadata_path,
                                     ErrorList& errors) {
  const json::Value* annotations = metadata ? json::Find(*metadata, "annotations") : nullptr;
  if (annotations == nullptr || !annotations->IsObject()) return;
  std::vector<std::pair<std::string, std::string>> gpu;
  for (const auto& member : annotations->GetObject()) {
    std::string_view key = json::AsView(member.name);
    if (!key.starts_with(api::kGpuAttributePrefix) || !member.value.IsString()) continue;
    gpu.emplace_back(std::string(key), std::string(json::AsView(member.value)));
  }
  if (gpu.empty()) return;
  const FieldPath path = metadata_path.Child("annotations");
  for (const api::GpuAttributeError& e : api::ParseGpuAttributes(gpu).errors) {
    errors.Invalid(path.Key(e.key), e.message);
  }
}

}  // namespace basalt::webhook
