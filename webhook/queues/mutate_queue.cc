#include "webhook/queues/mutate_queue.h"

#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"
#include "fmt/format.h"

namespace basalt::webhook {

JsonPatch MutateQueue(const json::Value& queue) {
  JsonPatch patch;
  // Members of the wrong type read as absent (the reader's type errors are not reported; the
  // validator and the API server's schema refuse such objects).
  api::FieldReader reader(&queue, "");
  api::FieldReader metadata = reader.Child("metadata");
  {
    api::FieldReader annotations = metadata.Child("annotations");
    std::string_view hierarchy = annotations.View(api::kHierarchyAnnotation);
    std::string_view weights = annotations.View(api::kHierarchyWeightsAnnotation);
    bool rooted = hierarchy == "root" || hierarchy.substr(0, 5) == "root/";
    if (!hierarchy.empty() && !weights.empty() && !rooted) {
      patch.AddString(
          fmt::format("/metadata/annotations/{}", EscapePointerToken(api::kHierarchyAnnotation)),
          fmt::format("root/{}", hierarchy));
      patch.AddString(fmt::format("/metadata/annotations/{}",
                                  EscapePointerToken(api::kHierarchyWeightsAnnotation)),
                      fmt::format("1/{}", weights));
    }
  }
  const bool is_root = metadata.View("name") == api::kRootQueue;
  api::FieldReader spec = reader.Child("spec");
  if (spec.value() == nullptr) {
    json::Value value(rapidjson::kObjectType);
    value.AddMember("weight", 1, patch.allocator());
    value.AddMember("reclaimable", true, patch.allocator());
    if (!is_root) value.AddMember("parent", "root", patch.allocator());
    patch.Add("/spec", value);
    return patch;
  }
  if (spec.Int("weight") == 0) patch.AddInt("/spec/weight", 1);
  if (!is_root && spec.View("parent").empty()) patch.AddString("/spec/parent", api::kRootQueue);
  if (!spec.Has("reclaimable")) patch.AddBool("/spec/reclaimable", true);
  return patch;
}

AdmissionResponse QueueMutator::Handle(const AdmissionRequest& request) const {
  if (request.operation != Operation::kCreate || request.object == nullptr) {
    return AdmissionResponse::Allow();
  }
  JsonPatch patch = MutateQueue(*request.object);
  if (patch.empty()) return AdmissionResponse::Allow();
  return AdmissionResponse::AllowWithPatch(patch.ToJson());
}

}  // namespace basalt::webhook
