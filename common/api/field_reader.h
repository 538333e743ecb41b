#pragma once
// FieldReader reads members of one JSON object and records the first type error with its
// full path ("spec.tasks[1].replicas: must be an integer"); absent and null members read as
// defaults. Readers created with Child/Elements share the error slot of their root.
//
// Paths are built only when something asks for one (an error, path()): each reader keeps the
// position of its object (parent, key, array index) in a small table shared with its root,
// so reading a valid object costs no string formatting or allocation per field. Keys are
// viewed in the document when the member exists (the document must outlive the readers, as
// for value()) and copied otherwise. The table grows by one entry per Child() and per element
// of Elements(), and lives as long as the last reader of its root (counted without atomics:
// readers are copied often and are meant for one thread); each thread then keeps one emptied
// table for its next root, so a validator reading one review after another does not allocate
// it each time.
//
// Not thread-safe: a root, the readers derived from it and their copies belong to one thread
// at a time.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/api/object.h"
#include "common/api/time.h"
#include "common/resource/resource_list.h"
#include "common/util/json.h"

namespace basalt::api {

class FieldReader {
 public:
  // `obj` may be null (everything reads as absent). `path` prefixes error messages.
  FieldReader(const json::Value* obj, std::string path);
  FieldReader(const FieldReader& other);
  FieldReader& operator=(const FieldReader& other);
  ~FieldReader();

  // OK, or the first error seen by this reader or any reader derived from it.
  absl::Status status() const { return context_->error; }
  bool ok() const { return context_->error.ok(); }
  const json::Value* value() const { return obj_; }
  // Where this reader's object is in the document ("spec.tasks[1]"), as in error messages.
  // Rendered on each call.
  std::string path() const;
  // For a reader from Elements(): the position of its object in the array (elements that
  // are not objects are skipped, so positions may jump); -1 otherwise.
  int64_t index() const;
  // Whether member `key` is present and not JSON null.
  bool Has(std::string_view key) const { return Get(key) != nullptr; }
  // Member `key` of any type, or null when absent or JSON null (for checks that need the raw
  // value, e.g. a validator reporting a wrong type with its own wording).
  const json::Value* Member(std::string_view key) const { return Get(key); }

  std::string String(std::string_view key);
  // As String, without a copy: a view of the document's string ("" when absent or null).
  std::string_view View(std::string_view key);
  std::optional<std::string> OptString(std::string_view key);
  // As OptString, without a copy: a view of the document's string.
  std::optional<std::string_view> OptView(std::string_view key);
  // For checks with their own wording for a wrong type: null when `key` is absent or JSON
  // null, the document's string when it is a string, `not_string` when it has another type.
  // Records no error.
  std::optional<std::string_view> ViewIfPresent(std::string_view key, std::string_view not_string);
  int64_t Int(std::string_view key, int64_t def = 0);
  std::optional<int64_t> OptInt(std::string_view key);
  // As Int/OptInt, but the value must fit in int32 (Kubernetes int32 fields).
  int32_t Int32(std::string_view key, int32_t def = 0);
  std::optional<int32_t> OptInt32(std::string_view key);
  bool Bool(std::string_view key, bool def = false);
  std::optional<bool> OptBool(std::string_view key);
  StringMap StringMapAt(std::string_view key);
  std::vector<std::string> StringList(std::string_view key);
  resource::ResourceList Resources(std::string_view key);
  std::optional<resource::ResourceList> OptResources(std::string_view key);
  std::optional<Time> OptTime(std::string_view key);
  // The member serialized as compact JSON, "" when absent or null.
  std::string Raw(std::string_view key);
  // The member if it is an object (error if present with another type).
  const json::Value* ObjectAt(std::string_view key);
  // A reader over the nested object `key` (absent reads as empty).
  FieldReader Child(std::string_view key);
  // Readers over the objects of array `key` (error if an element is not an object).
  std::vector<FieldReader> Elements(std::string_view key);
  // Readers over every element of array `key`, by position: an element that is not an object
  // (JSON null included) gets a reader whose value() is null and whose fields read as absent,
  // with no error recorded; index() is the position. Error if `key` is not an array.
  std::vector<FieldReader> Items(std::string_view key);
  // As Items, without building a vector: calls `f(FieldReader&)` for each element in turn
  // (the reader is the one Items would have returned at that position).
  template <typename F>
  void ForEachItem(std::string_view key, F&& f);
  // Calls `f(std::optional<std::string_view> s, size_t position)` for each element of array
  // `key` in turn: `s` views the element when it is a string and is empty (nullopt) otherwise.
  // Error if `key` is present and not an array (as Items).
  template <typename F>
  void ForEachString(std::string_view key, F&& f);
  // Calls `f(std::string_view name, std::optional<std::string_view> value)` for each member of
  // object `key` in document order (a string map such as labels): `value` views the member's
  // value when it is a string and is empty (nullopt) otherwise. Error if `key` is present and
  // not an object (as ObjectAt).
  template <typename F>
  void ForEachEntry(std::string_view key, F&& f);
  // Conditions at `key` (an array of condition objects).
  std::vector<Condition> Conditions(std::string_view key);

  // Records "<path>.<key>: <what>" unless an error is already recorded.
  void Fail(std::string_view key, std::string_view what);

 private:
  // Where one reader's object is: member `key` of the parent's object (or, for a root, the
  // root's whole path), then element `index` of that array when index >= 0. The key is a
  // view of the document's member name or, when `owned`, of context.owned_keys at offset
  // `key_offset`.
  struct Node {
    const char* key;
    uint32_t key_offset;
    uint32_t key_size;
    int32_t parent;  // -1 for the root
    bool owned;
    bool root;
    int64_t index;
  };
  // Shared by a root and every reader derived from it. The first kInline nodes need no
  // allocation of their own.
  struct Context {
    static constexpr size_t kInline = 16;
    Context() {}         // leaves `inline_nodes` uninitialized: only the first `size` are used
    size_t readers = 1;  // the FieldReaders sharing this context
    absl::Status error;
    size_t size = 0;
    std::array<Node, kInline> inline_nodes;
    std::vector<Node> more_nodes;
    std::string owned_keys;

    Node& at(int32_t i) {
      size_t u = static_cast<size_t>(i);
      return u < kInline ? inline_nodes[u] : more_nodes[u - kInline];
    }
    const Node& at(int32_t i) const {
      size_t u = static_cast<size_t>(i);
      return u < kInline ? inline_nodes[u] : more_nodes[u - kInline];
    }
    int32_t Add(const Node& n);
    // A node for member `key` of `parent`; `name` is the member's name in the document when
    // it is there (viewed), else null (the key is copied).
    int32_t AddMember(int32_t parent, std::string_view key, const json::Value* name, int64_t index);
    std::string_view KeyOf(const Node& n) const {
      return n.owned ? std::string_view(owned_keys).substr(n.key_offset, n.key_size)
                     : std::string_view(n.key, n.key_size);
    }
    void AppendPath(int32_t node, std::string& out) const;
  };

  struct ContextCache;
  // A fresh context (readers = 1, no nodes, no error), reused from this thread's spare when
  // there is one; ReleaseContext empties it and keeps it as the spare, or deletes it.
  static Context* NewContext();
  static void ReleaseContext(Context* c);
  static ContextCache& Cache();

  // Shares `context` (one more reader of it).
  FieldReader(const json::Value* obj, Context* context, int32_t node);
  // obj_ = obj, or null (with an error) when obj is present and not an object.
  void SetObject(const json::Value* obj);
  // The member, or null when absent or JSON null.
  const json::Value* Get(std::string_view key) const;
  // The member when it is an array; null when absent or JSON null, and null with an error
  // ("must be an array") when present with another type.
  const rapidjson::Value::Member* ArrayMember(std::string_view key);
  // The readers of Items() over array member `m` (named `key`), in turn.
  template <typename F>
  void EachItemOf(const rapidjson::Value::Member& m, std::string_view key, F& f);
  // The member (name and value) when present, JSON null included; else null.
  const rapidjson::Value::Member* FindMember(std::string_view key) const;
  std::string PathOf(std::string_view key) const;
  void FailAt(std::string message);

  const json::Value* obj_;
  Context* context_;  // shared; released (ReleaseContext) with its last reader
  int32_t node_;
};

template <typename F>
void FieldReader::ForEachItem(std::string_view key, F&& f) {
  const rapidjson::Value::Member* m = ArrayMember(key);
  if (m != nullptr) EachItemOf(*m, key, f);
}

template <typename F>
void FieldReader::ForEachString(std::string_view key, F&& f) {
  const rapidjson::Value::Member* m = ArrayMember(key);
  if (m == nullptr) return;
  size_t i = 0;
  for (const json::Value& e : m->value.GetArray()) {
    f(e.IsString() ? std::optional<std::string_view>(json::AsView(e)) : std::nullopt, i++);
  }
}

template <typename F>
void FieldReader::ForEachEntry(std::string_view key, F&& f) {
  const json::Value* obj = ObjectAt(key);
  if (obj == nullptr) return;
  for (const auto& member : obj->GetObject()) {
    f(json::AsView(member.name), member.value.IsString()
                                     ? std::optional<std::string_view>(json::AsView(member.value))
                                     : std::nullopt);
  }
}

template <typename F>
void FieldReader::EachItemOf(const rapidjson::Value::Member& m, std::string_view key, F& f) {
  int64_t i = 0;
  for (const json::Value& e : m.value.GetArray()) {
    FieldReader item(e.IsObject() ? &e : nullptr, context_,
                     context_->AddMember(node_, key, &m.name, i++));
    f(item);
  }
}

}  // namespace basalt::api
