#pragma once
// Zero-copy reads of single Volcano and object-metadata fields straight from a cached JSON
// document, for informer event handlers and reconcile checks that look at one or two fields
// and must not decode (or copy) the whole object the way Job::FromObject and
// PodGroup::FromObject do. The field names live here, beside the typed decoders, so the
// schema is read in one place (common/api) whichever way a caller reads it.
//
// Every function reads an absent, null or wrongly typed member as its default ("" / false /
// 0). Returned views point into `doc`, which must outlive them.
//
// Thread-safety: pure functions over a const document.

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/util/json.h"

namespace basalt::api::view {

// apiVersion and kind (TypeMeta).
std::string_view ApiVersion(const json::Value& doc);
std::string_view Kind(const json::Value& doc);
// metadata.uid, metadata.name, metadata.namespace, metadata.resourceVersion.
std::string_view Uid(const json::Value& doc);
std::string_view Name(const json::Value& doc);
std::string_view Namespace(const json::Value& doc);
std::string_view ResourceVersion(const json::Value& doc);
// metadata.annotations[key].
std::string_view Annotation(const json::Value& doc, std::string_view key);
// The name of the first ownerReference with controller: true and this kind, nullopt if none.
std::optional<std::string_view> ControllerName(const json::Value& doc, std::string_view kind);
// Whether an ownerReference with controller: true, this kind and this uid exists.
bool ControlledBy(const json::Value& doc, std::string_view kind, std::string_view uid);

// Whether two objects carry the same spec, member for member (both absent counts as the same).
bool SameSpec(const json::Value& a, const json::Value& b);

// Job (batch.volcano.sh): status.state.phase, and spec.queue ("default" when absent or empty,
// the CRD default).
std::string_view JobPhase(const json::Value& job);
std::string_view JobQueue(const json::Value& job);

// PodGroup (scheduling.volcano.sh): status.phase; whether two PodGroups carry the same
// status.conditions (both absent counts as the same).
std::string_view PodGroupPhase(const json::Value& pod_group);
bool SamePodGroupConditions(const json::Value& a, const json::Value& b);
// Whether the fields the job controller owns in a PodGroup's spec differ between `existing`
// and `desired`: minMember, priorityClassName, each minTaskMember entry of `desired`,
// subGroupPolicy, and minResources compared as quantities (unparsable counts as differing).
bool PodGroupSpecDiffers(const json::Value& existing, const json::Value& desired);

// Command (bus.volcano.sh): action and the target reference's fields.
struct CommandTarget {
  bool present = false;  // target is set
  std::string_view api_version;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
};
std::string_view CommandAction(const json::Value& command);
CommandTarget CommandTargetOf(const json::Value& command);

// PriorityClass (scheduling.k8s.io): value.
int64_t PriorityClassValue(const json::Value& priority_class);

}  // namespace basalt::api::view
