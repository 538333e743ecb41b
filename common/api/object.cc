#include "common/api/object.h"

#include <algorithm>

#include "common/api/codec.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {
namespace {

std::optional<std::string_view> MapEntry(const json::Value* meta, std::string_view field,
                                         std::string_view key) {
  if (meta == nullptr) return std::nullopt;
  const json::Value* m = json::Find(*meta, field);
  if (m == nullptr) return std::nullopt;
  const json::Value* v = json::Find(*m, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return json::AsView(*v);
}

StringMap ReadMap(const json::Value* meta, std::string_view field) {
  StringMap out;
  if (meta == nullptr) return out;
  const json::Value* m = json::Find(*meta, field);
  if (m == nullptr || !m->IsObject()) return out;
  for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
    if (it->value.IsString()) {
      out.emplace(json::AsView(it->name), json::AsView(it->value));
    }
  }
  return out;
}

std::optional<Time> ReadTime(const json::Value* meta, std::string_view field) {
  if (meta == nullptr) return std::nullopt;
  const json::Value* v = json::Find(*meta, field);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  auto t = ParseRfc3339(json::AsView(*v));
  if (!t.ok()) return std::nullopt;
  return *t;
}

}  // namespace

Object::Object() { doc_.SetObject(); }

absl::StatusOr<Object> Object::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(json::Document doc, json::Parse(json_text));
  return FromDocument(std::move(doc));
}

absl::StatusOr<Object> Object::FromDocument(json::Document doc) {
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("a Kubernetes object must be a JSON object");
  }
  return Object(std::move(doc));
}

absl::StatusOr<Object> Object::CopyOf(const json::Value& v) {
  if (!v.IsObject()) {
    return absl::InvalidArgumentError("a Kubernetes object must be a JSON object");
  }
  json::Document doc;
  doc.CopyFrom(v, doc.GetAllocator());
  return Object(std::move(doc));
}

Object::Object(const Object& other) { doc_.CopyFrom(other.doc_, doc_.GetAllocator()); }

Object& Object::operator=(const Object& other) {
  if (this != &other) {
    json::Document fresh;  // a new pool, so repeated assignment does not grow memory
    fresh.CopyFrom(other.doc_, fresh.GetAllocator());
    doc_ = std::move(fresh);
  }
  return *this;
}

std::string Object::ToJson() const { return json::Serialize(doc_); }

std::string_view Object::api_version() const { return json::GetString(doc_, "apiVersion"); }
std::string_view Object::kind() const { return json::GetString(doc_, "kind"); }

const json::Value* Object::Metadata() const {
  const json::Value* m = json::Find(doc_, "metadata");
  return m != nullptr && m->IsObject() ? m : nullptr;
}

json::Value& Object::MutableMetadata() { return json::EnsureObject(doc_, "metadata", allocator()); }

#define BASALT_META_STRING(method, field)                                  \
  std::string_view Object::method() const {                                \
    const json::Value* m = Metadata();                                     \
    return m == nullptr ? std::string_view() : json::GetString(*m, field); \
  }
BASALT_META_STRING(name, "name")
BASALT_META_STRING(generate_name, "generateName")
BASALT_META_STRING(namespace_name, "namespace")
BASALT_META_STRING(uid, "uid")
BASALT_META_STRING(resource_version, "resourceVersion")
#undef BASALT_META_STRING

int64_t Object::generation() const {
  const json::Value* m = Metadata();
  return m == nullptr ? 0 : json::GetInt(*m, "generation");
}

StringMap Object::labels() const { return ReadMap(Metadata(), "labels"); }
StringMap Object::annotations() const { return ReadMap(Metadata(), "annotations"); }

std::optional<std::string_view> Object::label(std::string_view key) const {
  return MapEntry(Metadata(), "labels", key);
}
std::optional<std::string_view> Object::annotation(std::string_view key) const {
  return MapEntry(Metadata(), "annotations", key);
}

std::vector<OwnerReference> Object::owner_references() const {
  std::vector<OwnerReference> out;
  const json::Value* m = Metadata();
  const json::Value* refs = m == nullptr ? nullptr : json::Find(*m, "ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return out;
  for (const json::Value& r : refs->GetArray()) {
    auto ref = DecodeOwnerReference(r);
    if (ref.ok()) out.push_back(*std::move(ref));
  }
  return out;
}

std::optional<OwnerReference> Object::controller_ref() const {
  for (OwnerReference& r : owner_references()) {
    if (r.controller) return std::move(r);
  }
  return std::nullopt;
}

std::optional<Time> Object::creation_timestamp() const {
  return ReadTime(Metadata(), "creationTimestamp");
}
std::optional<Time> Object::deletion_timestamp() const {
  return ReadTime(Metadata(), "deletionTimestamp");
}

std::vector<std::string> Object::finalizers() const {
  std::vector<std::string> out;
  const json::Value* m = Metadata();
  const json::Value* f = m == nullptr ? nullptr : json::Find(*m, "finalizers");
  if (f == nullptr || !f->IsArray()) return out;
  for (const json::Value& v : f->GetArray()) {
    if (v.IsString()) out.emplace_back(json::AsView(v));
  }
  return out;
}

std::string Object::Key() const {
  std::string_view ns = namespace_name();
  if (ns.empty()) return std::string(name());
  return fmt::format("{}/{}", ns, name());
}

void Object::SetApiVersionKind(std::string_view api_version, std::string_view kind) {
  WriteString(doc_, "apiVersion", api_version, allocator());
  WriteString(doc_, "kind", kind, allocator());
}

void Object::SetName(std::string_view v) { WriteString(MutableMetadata(), "name", v, allocator()); }
void Object::SetGenerateName(std::string_view v) {
  WriteString(MutableMetadata(), "generateName", v, allocator());
}
void Object::SetNamespace(std::string_view v) {
  WriteString(MutableMetadata(), "namespace", v, allocator());
}
void Object::SetUid(std::string_view v) { WriteString(MutableMetadata(), "uid", v, allocator()); }
void Object::SetResourceVersion(std::string_view v) {
  WriteString(MutableMetadata(), "resourceVersion", v, allocator());
}

void Object::SetLabel(std::string_view key, std::string_view value) {
  json::Value& labels = json::EnsureObject(MutableMetadata(), "labels", allocator());
  WriteString(labels, key, value, allocator());
}
void Object::RemoveLabel(std::string_view key) {
  if (json::Value* labels = json::FindMutable(MutableMetadata(), "labels")) {
    EraseMember(*labels, key);
  }
}
void Object::SetAnnotation(std::string_view key, std::string_view value) {
  json::Value& ann = json::EnsureObject(MutableMetadata(), "annotations", allocator());
  WriteString(ann, key, value, allocator());
}
void Object::RemoveAnnotation(std::string_view key) {
  if (json::Value* ann = json::FindMutable(MutableMetadata(), "annotations")) {
    EraseMember(*ann, key);
  }
}

void Object::SetOwnerReferences(const std::vector<OwnerReference>& refs) {
  json::Value arr(rapidjson::kArrayType);
  for (const OwnerReference& r : refs)
    arr.PushBack(EncodeOwnerReference(r, allocator()), allocator());
  json::Set(MutableMetadata(), "ownerReferences", std::move(arr), allocator());
}

void Object::AddOwnerReference(const OwnerReference& ref) {
  std::vector<OwnerReference> refs = owner_references();
  auto it = std::find_if(refs.begin(), refs.end(),
                         [&](const OwnerReference& r) { return r.uid == ref.uid; });
  if (it != refs.end()) {
    *it = ref;
  } else {
    refs.push_back(ref);
  }
  SetOwnerReferences(refs);
}

void Object::SetFinalizers(const std::vector<std::string>& finalizers) {
  WriteStringList(MutableMetadata(), "finalizers", finalizers, allocator());
}

void Object::SetCreationTimestamp(Time t) {
  WriteTime(MutableMetadata(), "creationTimestamp", t, allocator());
}
void Object::SetDeletionTimestamp(Time t) {
  WriteTime(MutableMetadata(), "deletionTimestamp", t, allocator());
}

json::Value& Object::EnsurePath(std::initializer_list<std::string_view> path) {
  json::Value* cur = &doc_;
  for (std::string_view k : path) cur = &json::EnsureObject(*cur, k, allocator());
  return *cur;
}

void Object::SetPath(std::initializer_list<std::string_view> path, const json::Value& value) {
  if (path.size() == 0) return;
  json::Value* cur = &doc_;
  auto last = path.end() - 1;
  for (auto it = path.begin(); it != last; ++it) cur = &json::EnsureObject(*cur, *it, allocator());
  json::Value copy(value, allocator());
  json::Set(*cur, *last, std::move(copy), allocator());
}

absl::Status Object::CheckKind(std::string_view want) const {
  std::string_view k = kind();
  if (!k.empty() && k != want) {
    return absl::InvalidArgumentError(fmt::format("expected kind {}, got {} ({})", want, k, Key()));
  }
  return absl::OkStatus();
}

std::string Object::Describe(std::string_view kind) const {
  std::string key = Key();
  return key.empty() ? std::string(kind) : fmt::format("{} {}", kind, key);
}

OwnerReference ControllerRef(std::string_view api_version, std::string_view kind,
                             std::string_view name, std::string_view uid) {
  return OwnerReference{std::string(api_version), std::string(kind),
                        std::string(name),        std::string(uid),
                        /*controller=*/true,      /*block_owner_deletion=*/true};
}

json::Value EncodeOwnerReference(const OwnerReference& ref, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  WriteString(v, "apiVersion", ref.api_version, a);
  WriteString(v, "kind", ref.kind, a);
  WriteString(v, "name", ref.name, a);
  WriteString(v, "uid", ref.uid, a);
  if (ref.controller) WriteBool(v, "controller", true, a);
  if (ref.block_owner_deletion) WriteBool(v, "blockOwnerDeletion", true, a);
  return v;
}

absl::StatusOr<OwnerReference> DecodeOwnerReference(const json::Value& v) {
  if (!v.IsObject()) return absl::InvalidArgumentError("owner reference must be an object");
  FieldReader r(&v, "");
  OwnerReference ref;
  ref.api_version = r.String("apiVersion");
  ref.kind = r.String("kind");
  ref.name = r.String("name");
  ref.uid = r.String("uid");
  ref.controller = r.Bool("controller");
  ref.block_owner_deletion = r.Bool("blockOwnerDeletion");
  BASALT_RETURN_IF_ERROR(r.status());
  return ref;
}

}  // namespace basalt::api
