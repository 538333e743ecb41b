#pragma once
// Object is the handle through which informers hand out cached Kubernetes objects: the store
// key ("namespace/name", or "name" for cluster-scoped objects), the resourceVersion, and an
// immutable payload. The payload is, by default, the object's whole JSON document
// (json::Document); a consumer that needs only a few fields installs a Transform that turns
// each document into a small struct (api::CompactPod for the scheduler) and the document is
// dropped right after.
//
// Why type erasure rather than a Store<T>/SharedInformer<T> template: the store, reflector and
// informer are non-trivial threaded code; as templates they would live in headers and be
// compiled in every controller TU. Here they are compiled once, and the only templated code
// is the few inline lines of As<T>() / Transform::To<T>(), with a checked type tag so a wrong
// cast is caught (as a broken invariant) instead of being undefined behaviour.
//
//   informer::Object obj = store.Get("ns/p1");
//   if (obj) use(obj.doc());                       // default payload
//   const api::CompactPod& pod = obj.As<api::CompactPod>();  // with CompactPodTransform()
//
// Ownership: the payload is shared and never mutated (cpp-style-notes 4.4: one Document per
// object, replaced wholesale on update). Copying an Object copies one shared_ptr; a handle
// keeps its payload alive after the store has replaced or dropped it. Thread-safe to read
// from any number of threads.

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "common/util/json.h"

namespace basalt::informer {

// Identifies a payload type without RTTI.
using TypeTag = const void*;
namespace internal {
template <typename T>
inline constexpr char kTypeTagOf = 0;
[[noreturn]] void PayloadTypeMismatch(std::string_view key);
}  // namespace internal
template <typename T>
TypeTag TypeTagOf() {
  return &internal::kTypeTagOf<T>;
}

class Object {
 public:
  // A null handle (what Store::Get returns for an absent key).
  Object() = default;

  template <typename T>
  static Object Make(std::string key, std::string resource_version,
                     std::shared_ptr<const T> payload) {
    return Object(std::move(key), std::move(resource_version), TypeTagOf<T>(),
                  std::shared_ptr<const void>(std::move(payload)));
  }

  explicit operator bool() const { return rep_ != nullptr; }

  // The store key: "namespace/name", or "name" for cluster-scoped objects.
  const std::string& key() const { return rep_->key; }
  // "" for cluster-scoped objects.
  std::string_view namespace_name() const;
  std::string_view name() const;
  // metadata.resourceVersion of this state of the object.
  const std::string& resource_version() const { return rep_->resource_version; }

  template <typename T>
  bool Is() const {
    return rep_ != nullptr && rep_->type == TypeTagOf<T>();
  }
  // The payload as T, or nullptr if the payload is another type.
  template <typename T>
  const T* TryAs() const {
    return Is<T>() ? static_cast<const T*>(rep_->payload.get()) : nullptr;
  }
  // The payload as T. Crashes (with a log line naming the key) if it is another type: that is
  // a wiring bug, not a runtime condition.
  template <typename T>
  const T& As() const {
    const T* p = TryAs<T>();
    if (p == nullptr) internal::PayloadTypeMismatch(rep_ ? std::string_view(rep_->key) : "");
    return *p;
  }
  // Shares ownership of the payload (it outlives this handle and the store).
  template <typename T>
  std::shared_ptr<const T> Share() const {
    const T& p = As<T>();
    return std::shared_ptr<const T>(rep_->payload, &p);
  }
  // The payload of informers that keep whole documents (the default Transform).
  const json::Document& doc() const { return As<json::Document>(); }

  // True when both handles refer to the same stored state (not a deep comparison).
  friend bool operator==(const Object& a, const Object& b) { return a.rep_ == b.rep_; }

 private:
  struct Rep {
    std::string key;
    std::string resource_version;
    TypeTag type;
    std::shared_ptr<const void> payload;
  };
  friend class Transform;
  Object(std::string key, std::string resource_version, TypeTag type,
         std::shared_ptr<const void> payload);

  std::shared_ptr<const Rep> rep_;
};

// "namespace/name" or "name" from an object's metadata. kInvalidArgument when metadata.name is
// missing.
absl::StatusOr<std::string> KeyOf(const json::Value& object);
// Splits a store key into namespace ("" when cluster-scoped) and name.
std::pair<std::string_view, std::string_view> SplitKey(std::string_view key);

// Moves `doc` into a shared immutable Document whose memory pool is sized to the object.
// RapidJSON's default pool reserves 64 KiB on the first allocation, so a cache of small
// objects built from per-object Documents would hold 64 KiB each; this keeps one right-sized
// chunk per object instead.
std::shared_ptr<const json::Document> ShareDocument(json::Document&& doc);

// A Transform turns each listed or watched document into the payload the informer stores.
// It has a name, which SharedInformerFactory uses to tell informers on the same resource
// apart ("document", "compact-pod", ...). Copyable; thread-safe to Apply concurrently if the
// function is.
class Transform {
 public:
  // Keeps the whole object as a right-sized json::Document (ShareDocument).
  Transform();

  template <typename T>
  using Fn = std::function<absl::StatusOr<std::shared_ptr<const T>>(json::Document&& doc)>;

  // Stores what `fn` makes of each document. `fn` may return an error for an object it cannot
  // decode; the informer logs it and skips the object.
  template <typename T>
  static Transform To(std::string name, Fn<T> fn) {
    Transform t;
    t.name_ = std::move(name);
    t.fn_ = [fn = std::move(fn)](json::Document&& doc) -> absl::StatusOr<Payload> {
      absl::StatusOr<std::shared_ptr<const T>> p = fn(std::move(doc));
      if (!p.ok()) return p.status();
      return Payload{TypeTagOf<T>(), std::shared_ptr<const void>(*std::move(p))};
    };
    return t;
  }

  const std::string& name() const { return name_; }

  // Reads the key and resourceVersion, then runs the function. Errors name the object.
  absl::StatusOr<Object> Apply(json::Document&& doc) const;

 private:
  struct Payload {
    TypeTag type;
    std::shared_ptr<const void> data;
  };
  std::string name_;
  std::function<absl::StatusOr<Payload>(json::Document&&)> fn_;
};

}  // namespace basalt::informer
