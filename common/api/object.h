#pragma once
// Object is a Kubernetes object kept as its raw JSON (one rapidjson::Document per object, see
// cpp-style-notes 4.4) with typed accessors for ObjectMeta. Typed kinds (Pod, Job, PodGroup...)
// derive from it and add decoded structs for the fields Basalt uses; every other field stays
// in the document untouched, so ToJson() re-encodes the object without losing anything.
//
// Setters edit the document in place. Each edit may grow the document's memory pool (RapidJSON
// never frees it), which is fine for the short-lived copies Basalt edits before a write; caches
// must replace objects wholesale rather than edit them.
//
// string_views returned by accessors point into the document: valid until the next edit, move
// or destruction of this object. Copies are deep. Thread-compatible.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/time.h"
#include "common/util/json.h"

namespace basalt::api {

using StringMap = std::map<std::string, std::string, std::less<>>;

// metav1.OwnerReference (also the `target` of a bus.volcano.sh Command).
struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

// The ownerReference a controller puts on every object it creates for an owner (what
// metav1.NewControllerRef builds): the owner's apiVersion, kind, name and uid, with controller
// and blockOwnerDeletion true. The one place such a reference is built.
OwnerReference ControllerRef(std::string_view api_version, std::string_view kind,
                             std::string_view name, std::string_view uid);

// A condition as found in status.conditions of Pods, Nodes and PodGroups.
struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::optional<Time> last_transition_time;
  std::optional<Time> last_probe_time;
  std::string transition_id;  // PodGroup conditions only

  friend bool operator==(const Condition&, const Condition&) = default;
};

class Object {
 public:
  // An empty object: {}.
  Object();
  // Parses JSON text; the top level must be an object.
  static absl::StatusOr<Object> Parse(std::string_view json_text);
  // Takes ownership of a parsed document; the top level must be an object.
  static absl::StatusOr<Object> FromDocument(json::Document doc);
  // Deep-copies `v` (e.g. one item of a List response) into a document of its own, so the
  // list's document can be dropped; `v` must be an object.
  static absl::StatusOr<Object> CopyOf(const json::Value& v);

  Object(const Object& other);
  Object& operator=(const Object& other);
  Object(Object&&) noexcept = default;
  Object& operator=(Object&&) noexcept = default;
  virtual ~Object() = default;

  // The whole object, re-encoded compactly (unknown fields included, member order kept).
  std::string ToJson() const;
  const json::Value& doc() const { return doc_; }
  // Direct access for edits the typed setters do not cover. Keep the typed view in sync:
  // typed kinds decode their structs only when parsed.
  json::Value& mutable_doc() { return doc_; }
  json::Allocator& allocator() { return doc_.GetAllocator(); }

  // TypeMeta.
  std::string_view api_version() const;
  std::string_view kind() const;

  // ObjectMeta. Absent fields read as empty / zero / nullopt.
  std::string_view name() const;
  std::string_view generate_name() const;
  std::string_view namespace_name() const;
  std::string_view uid() const;
  std::string_view resource_version() const;
  int64_t generation() const;
  StringMap labels() const;
  StringMap annotations() const;
  std::optional<std::string_view> label(std::string_view key) const;
  std::optional<std::string_view> annotation(std::string_view key) const;
  std::vector<OwnerReference> owner_references() const;
  // The ownerReference with controller: true, if any.
  std::optional<OwnerReference> controller_ref() const;
  std::optional<Time> creation_timestamp() const;
  std::optional<Time> deletion_timestamp() const;
  std::vector<std::string> finalizers() const;
  // "namespace/name", or "name" for cluster-scoped objects (the informer store key).
  std::string Key() const;

  // Setters (edit the document in place, creating metadata as needed).
  void SetApiVersionKind(std::string_view api_version, std::string_view kind);
  void SetName(std::string_view name);
  void SetGenerateName(std::string_view prefix);
  void SetNamespace(std::string_view ns);
  void SetUid(std::string_view uid);
  void SetResourceVersion(std::string_view rv);
  void SetLabel(std::string_view key, std::string_view value);
  void RemoveLabel(std::string_view key);
  void SetAnnotation(std::string_view key, std::string_view value);
  void RemoveAnnotation(std::string_view key);
  void SetOwnerReferences(const std::vector<OwnerReference>& refs);
  // Appends `ref`, replacing an existing reference with the same uid.
  void AddOwnerReference(const OwnerReference& ref);
  void SetFinalizers(const std::vector<std::string>& finalizers);
  void SetCreationTimestamp(Time t);
  void SetDeletionTimestamp(Time t);

  // Replaces the member at `path` (creating intermediate objects) with a deep copy of `value`.
  void SetPath(std::initializer_list<std::string_view> path, const json::Value& value);
  // The object at `path`, created (as {}) with its parents when absent or not an object.
  json::Value& EnsurePath(std::initializer_list<std::string_view> path);

 protected:
  json::Value& MutableMetadata();
  const json::Value* Metadata() const;
  // Checks that `kind` (when present) equals `want`; used by typed kinds.
  absl::Status CheckKind(std::string_view want) const;
  // "Kind ns/name" for error messages.
  std::string Describe(std::string_view kind) const;

 private:
  explicit Object(json::Document doc) : doc_(std::move(doc)) {}

  json::Document doc_;
};

// Encodes/decodes single values shared by several kinds.
json::Value EncodeOwnerReference(const OwnerReference& ref, json::Allocator& a);
absl::StatusOr<OwnerReference> DecodeOwnerReference(const json::Value& v);

}  // namespace basalt::api
