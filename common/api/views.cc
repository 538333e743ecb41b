#include "common/api/views.h"

#include "common/resource/resource_list.h"

namespace basalt::api::view {
namespace {

std::string_view StringAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* p = json::FindPath(v, path);
  return p != nullptr && p->IsString() ? json::AsView(*p) : std::string_view();
}

const json::Value* ControllerRef(const json::Value& doc, std::string_view kind,
                                 std::string_view uid, bool match_uid) {
  const json::Value* owners = json::FindPath(doc, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->IsArray()) return nullptr;
  for (const json::Value& o : owners->GetArray()) {
    if (json::GetBool(o, "controller") && json::GetString(o, "kind") == kind &&
        (!match_uid || json::GetString(o, "uid") == uid)) {
      return &o;
    }
  }
  return nullptr;
}

}  // namespace

std::string_view ApiVersion(const json::Value& doc) { return StringAt(doc, {"apiVersion"}); }
std::string_view Kind(const json::Value& doc) { return StringAt(doc, {"kind"}); }
std::string_view Uid(const json::Value& doc) { return StringAt(doc, {"metadata", "uid"}); }
std::string_view Name(const json::Value& doc) { return StringAt(doc, {"metadata", "name"}); }
std::string_view Namespace(const json::Value& doc) {
  return StringAt(doc, {"metadata", "namespace"});
}
std::string_view ResourceVersion(const json::Value& doc) {
  return StringAt(doc, {"metadata", "resourceVersion"});
}
std::string_view Annotation(const json::Value& doc, std::string_view key) {
  return StringAt(doc, {"metadata", "annotations", key});
}

std::optional<std::string_view> ControllerName(const json::Value& doc, std::string_view kind) {
  const json::Value* ref = ControllerRef(doc, kind, {}, /*match_uid=*/false);
  if (ref == nullptr) return std::nullopt;
  return json::GetString(*ref, "name");
}

bool ControlledBy(const json::Value& doc, std::string_view kind, std::string_view uid) {
  return ControllerRef(doc, kind, uid, /*match_uid=*/true) != nullptr;
}

bool SameSpec(const json::Value& a, const json::Value& b) {
  const json::Value* sa = json::Find(a, "spec");
  const json::Value* sb = json::Find(b, "spec");
  return (sa == nullptr) == (sb == nullptr) && (sa == nullptr || *sa == *sb);
}

std::string_view JobPhase(const json::Value& job) {
  return StringAt(job, {"status", "state", "phase"});
}

std::string_view JobQueue(const json::Value& job) {
  const json::Value* spec = json::Find(job, "spec");
  std::string_view queue = spec != nullptr ? json::GetString(*spec, "queue", "default") : "default";
  return queue.empty() ? std::string_view("default") : queue;
}

std::string_view PodGroupPhase(const json::Value& pod_group) {
  return StringAt(pod_group, {"status", "phase"});
}

bool SamePodGroupConditions(const json::Value& a, const json::Value& b) {
  const json::Value* ca = json::FindPath(a, {"status", "conditions"});
  const json::Value* cb = json::FindPath(b, {"status", "conditions"});
  return (ca == nullptr) == (cb == nullptr) && (ca == nullptr || *ca == *cb);
}

bool PodGroupSpecDiffers(const json::Value& existing, const json::Value& desired) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value* e = json::Find(existing, "spec");
  const json::Value* d = json::Find(desired, "spec");
  if (e == nullptr) e = &kEmpty;
  if (d == nullptr) d = &kEmpty;
  if (json::GetInt(*e, "minMember") != json::GetInt(*d, "minMember")) return true;
  if (json::GetString(*e, "priorityClassName") != json::GetString(*d, "priorityClassName")) {
    return true;
  }
  const json::Value* dm = json::Find(*d, "minTaskMember");
  if (dm != nullptr && dm->IsObject()) {
    const json::Value* em = json::Find(*e, "minTaskMember");
    for (const auto& m : dm->GetObject()) {
      if (em == nullptr || json::GetOptionalInt(*em, json::AsView(m.name)) !=
                               std::optional<int64_t>(m.value.IsInt64() ? m.value.GetInt64() : 0)) {
        return true;
      }
    }
  }
  const json::Value* esg = json::Find(*e, "subGroupPolicy");
  const json::Value* dsg = json::Find(*d, "subGroupPolicy");
  if ((esg == nullptr) != (dsg == nullptr) || (esg != nullptr && *esg != *dsg)) return true;
  static const json::Value kNull;
  const json::Value* emr = json::Find(*e, "minResources");
  const json::Value* dmr = json::Find(*d, "minResources");
  auto er = resource::ResourceList::FromJson(emr != nullptr ? *emr : kNull);
  auto dr = resource::ResourceList::FromJson(dmr != nullptr ? *dmr : kNull);
  if (!er.ok() || !dr.ok()) return true;
  return !(*er == *dr);
}

std::string_view CommandAction(const json::Value& command) {
  return json::GetString(command, "action");
}

CommandTarget CommandTargetOf(const json::Value& command) {
  CommandTarget t;
  const json::Value* target = json::Find(command, "target");
  if (target == nullptr) return t;
  t.present = true;
  t.api_version = json::GetString(*target, "apiVersion");
  t.kind = json::GetString(*target, "kind");
  t.name = json::GetString(*target, "name");
  t.uid = json::GetString(*target, "uid");
  return t;
}

int64_t PriorityClassValue(const json::Value& priority_class) {
  return json::GetInt(priority_class, "value");
}

}  // namespace basalt::api::view
