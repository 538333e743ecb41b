#include "webhook/podgroups/mutate_podgroup.h"

#include "common/api/field_reader.h"
#include "common/api/vocabulary.h"

namespace basalt::webhook {

JsonPatch MutatePodGroup(const json::Value& podgroup, std::string_view ns,
                         const ClusterLister& lister) {
  JsonPatch patch;
  api::FieldReader reader(&podgroup, "");
  api::FieldReader spec = reader.Child("spec");  // a queue of the wrong type reads as absent
  std::string_view queue = spec.View("queue");
  if (!queue.empty() && queue != api::kDefaultQueue) return patch;
  std::string ns_queue = lister.NamespaceDefaultQueue(ns);
  if (ns_queue.empty() || ns_queue == queue) return patch;
  if (spec.value() == nullptr) {
    json::Value value(rapidjson::kObjectType);
    value.AddMember("queue", json::MakeString(ns_queue, patch.allocator()), patch.allocator());
    patch.Add("/spec", value);
  } else {
    patch.AddString("/spec/queue", ns_queue);
  }
  return patch;
}

AdmissionResponse PodGroupMutator::Handle(const AdmissionRequest& request) const {
  if (request.operation != Operation::kCreate || request.object == nullptr) {
    return AdmissionResponse::Allow();
  }
  std::string_view ns = request.namespace_;
  if (ns.empty()) ns = api::FieldReader(request.object, "").Child("metadata").View("namespace");
  JsonPatch patch = MutatePodGroup(*request.object, ns, lister_);
  if (patch.empty()) return AdmissionResponse::Allow();
  return AdmissionResponse::AllowWithPatch(patch.ToJson());
}

}  // namespace basalt::webhook
