#include "webhook/queues/mutate_queue.h"

#include "common/api/vocabulary.h"
#include "fmt/format.h"

namespace basalt::webhook {

JsonPatch MutateQueue(const json::Value& queue) {
  JsonPatch patch;
  if (const json::Value* annotations = json::FindPath(queue, {"metadata", "annotations"})) {
    std::string_view hierarchy = json::GetString(*annotations, api::kHierarchyAnnotation);
    std::string_view weights = json::GetString(*annotations, api::kHierarchyWeightsAnnotation);
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
  const json::Value* md = json::Find(queue, "metadata");
  const bool is_root = md != nullptr && json::GetString(*md, "name") == api::kRootQueue;
  const json::Value* spec = json::Find(queue, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    json::Value value(rapidjson::kObjectType);
    value.AddMember("weight", 1, patch.allocator());
    value.AddMember("reclaimable", true, patch.allocator());
    if (!is_root) value.AddMember("parent", "root", patch.allocator());
    patch.Add("/spec", value);
    return patch;
  }
  if (json::GetInt(*spec, "weight") == 0) patch.AddInt("/spec/weight", 1);
  if (!is_root && json::GetString(*spec, "parent").empty()) {
    patch.AddString("/spec/parent", api::kRootQueue);
  }
  const json::Value* reclaimable = json::Find(*spec, "reclaimable");
  if (reclaimable == nullptr || reclaimable->IsNull()) patch.AddBool("/spec/reclaimable", true);
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
