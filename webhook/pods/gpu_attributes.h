#pragma once
// Validation of the GPU attribute annotations (gpu.basalt.dev/min-memory, max-memory, products,
// families, preferred-products; common/api/gpu_attributes.h) on a Pod or a Job task's pod
// template, so that a misspelt or malformed requirement is refused at admission with the
// annotation's field path instead of leaving the pod Pending. Stateless; thread-safe.

#include "common/util/json.h"
#include "webhook/validation.h"

namespace basalt::webhook {

// `metadata` is the object's (or template's) metadata, may be null; errors are reported under
// `metadata_path`.annotations[<key>].
void ValidateGpuAttributeAnnotations(const json::Value* metadata, const FieldPath& metadata_path,
                                     ErrorList& errors);

}  // namespace basalt::webhook
