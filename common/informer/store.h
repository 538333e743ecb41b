#pragma once
// Store is the informer cache: a thread-safe map from key ("namespace/name", or "name" for
// cluster-scoped objects) to the latest known Object, with secondary indices and the
// resourceVersion the cache is synced to.
//
// Indices: an index function maps an object to zero or more index values; ByIndex(name,
// value) returns the objects that produced `value`. The namespace index (kNamespaceIndex) is
// always present; LabelIndexFunc() indexes documents by "key=value" of each label; any other
// function can be added with AddIndexers, before or after objects arrive (existing objects are
// indexed at once).
//
//   Store store;
//   store.AddIndexers({{"node", IndexBy<json::Document>(NodeNameOf)}});
//   for (const Object& pod : *store.ByIndex("node", "n1")) ...
//
// The mutators (Upsert, Delete, Replace) are what an informer calls; they return the previous
// state so the caller can tell adds from updates and emit tombstones. Objects are replaced
// wholesale, never edited.
//
// Thread-safety: all methods are safe to call concurrently; readers share a lock. Index
// functions run under the store's lock and must not call back into the store.

#include <functional>
#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/informer/object.h"

namespace basalt::informer {

using IndexFunc = std::function<std::vector<std::string>(const Object& obj)>;
using Indexers = std::map<std::string, IndexFunc>;

// Name of the built-in namespace index (values: the namespace; cluster-scoped objects are not
// indexed).
inline constexpr char kNamespaceIndex[] = "namespace";
// Conventional name for LabelIndexFunc.
inline constexpr char kLabelIndex[] = "labels";

IndexFunc NamespaceIndexFunc();
// "key=value" for every label of a json::Document payload; nothing for other payloads.
IndexFunc LabelIndexFunc();
// Adapts a function of the typed payload; objects of another payload type are not indexed.
template <typename T>
IndexFunc IndexBy(std::function<std::vector<std::string>(const T&)> fn) {
  return [fn = std::move(fn)](const Object& obj) -> std::vector<std::string> {
    const T* p = obj.TryAs<T>();
    return p != nullptr ? fn(*p) : std::vector<std::string>();
  };
}

// One change made by Store::Replace: `old` null means added; `current` null means the object
// vanished (`old` is its last known state: a tombstone).
struct StoreChange {
  Object old = {};
  Object current = {};
};

class Store {
 public:
  // The namespace index plus `indexers`.
  explicit Store(Indexers indexers = {});
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Adds indices and indexes the current contents. kAlreadyExists (and no change) if a name is
  // taken.
  absl::Status AddIndexers(Indexers indexers);

  // Inserts or replaces the object under obj.key(); returns the previous state (null if none).
  Object Upsert(Object obj);
  // Removes `key`; returns what was stored (null if absent).
  Object Delete(std::string_view key);
  // Makes the contents exactly `objects` (a relist) and sets the resourceVersion. Returns, in
  // key order, one change per object added, per object kept (old and current both set, even
  // when unchanged), and per object that vanished (its last known state, current null).
  std::vector<StoreChange> Replace(std::vector<Object> objects, std::string resource_version);

  // Null handle if absent.
  Object Get(std::string_view key) const;
  std::vector<Object> List() const;
  std::vector<std::string> Keys() const;
  // Objects whose index `index_name` has `value`. kNotFound for an unknown index.
  absl::StatusOr<std::vector<Object>> ByIndex(std::string_view index_name,
                                              std::string_view value) const;
  // Keys of those objects, sorted.
  absl::StatusOr<std::vector<std::string>> IndexKeys(std::string_view index_name,
                                                     std::string_view value) const;
  // All values index `index_name` currently holds, sorted (e.g. every namespace in use).
  absl::StatusOr<std::vector<std::string>> IndexValues(std::string_view index_name) const;
  size_t size() const;

  // The resourceVersion the contents reflect (of the last list, watch event or bookmark).
  std::string resource_version() const;
  void SetResourceVersion(std::string resource_version);

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using KeySet = std::unordered_set<std::string, StringHash, std::equal_to<>>;
  struct Index {
    IndexFunc fn;
    std::unordered_map<std::string, KeySet, StringHash, std::equal_to<>> values;
  };

  // *Locked: mu_ held (exclusively to modify).
  void IndexLocked(const Object& obj);
  void UnindexLocked(const Object& obj);
  static void IndexInto(Index& index, const Object& obj);
  static void UnindexFrom(Index& index, const Object& obj);
  absl::StatusOr<const KeySet*> FindKeysLocked(std::string_view index_name,
                                               std::string_view value) const;

  // Locking uses std::mutex / std::shared_mutex rather than absl::Mutex (STYLE.md's preference):
  // Debian's Abseil is not instrumented for ThreadSanitizer, so under BASALT_TSAN every
  // absl::Mutex-protected access is reported as a race and real races would drown.
  mutable std::shared_mutex mu_;
  // All guarded by mu_.
  std::unordered_map<std::string, Object, StringHash, std::equal_to<>> items_;
  std::map<std::string, Index, std::less<>> indices_;
  std::string resource_version_;
};

}  // namespace basalt::informer
