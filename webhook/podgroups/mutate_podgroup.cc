#include "webhook/podgroups/mutate_podgroup.h"

#include "common/api/vocabulary.h"

namespace basalt::webhook {

JsonPatch MutatePodGroup(const json::Value& podgroup, std::string_view ns,
                         const ClusterLister& lister) {
  JsonPatch patch;
  const json::Value* spec = json::Find(podgroup, "spec");
  std::string_view queue = spec ? json::GetString(*spec, "queue") : std::string_view();
  if (!queue.empty() && queue != api::kDefaultQueue) return patch;
  std::string ns_queue = lister.NamespaceDefaultQueue(ns);
  if (ns_queue.empty() || ns_queue == queue) return patch;
  if (spec == nullptr || !spec->IsObject()) {
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
  if (ns.empty()) {
    if (const json::Value* md = json::Find(*request.object, "metadata")) {
      ns = json::GetString(*md, "namespace");
    }
  }
  JsonPatch patch = MutatePodGroup(*request.object, ns, lister_);
  if (patch.empty()) return AdmissionResponse::Allow();
  return AdmissionResponse::AllowWithPatch(patch.ToJson());
}

}  // namespace basalt::webhook
