#pragma once
// RFC 6902 JSON Patch: a builder for the mutating handlers and an applier (used by tests and
// by anyone who wants to see what a patch does to an object).
//
// JsonPatch is a value; not thread-safe for concurrent mutation.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/util/json.h"

namespace basalt::webhook {

// Escapes one reference token of a JSON Pointer (RFC 6901): '~' -> "~0", '/' -> "~1".
// "/metadata/annotations/" + EscapePointerToken("volcano.sh/hierarchy").
std::string EscapePointerToken(std::string_view token);

// Accumulates patch operations in order.
class JsonPatch {
 public:
  JsonPatch();

  // {"op":"add","path":path,"value":value}; `value` is deep-copied. For an object member,
  // add also replaces an existing value.
  void Add(std::string_view path, const json::Value& value);
  void AddString(std::string_view path, std::string_view value);
  void AddInt(std::string_view path, int64_t value);
  void AddBool(std::string_view path, bool value);
  // {"op":"replace",...}: the target must exist.
  void Replace(std::string_view path, const json::Value& value);
  void ReplaceInt(std::string_view path, int64_t value);
  // {"op":"remove","path":path}.
  void Remove(std::string_view path);

  bool empty() const { return ops_->Empty(); }
  size_t size() const { return ops_->Size(); }

  // The operation array as compact JSON text ("[]" when empty).
  std::string ToJson() const;

  // Allocator for building values passed to Add/Replace without an extra copy.
  json::Allocator& allocator() { return ops_->GetAllocator(); }

 private:
  void Push(std::string_view op, std::string_view path, json::Value value);

  std::unique_ptr<json::Document> ops_;
};

// Applies `patch` (JSON text of an operation array) to `doc` in place. Supports add, remove,
// replace, move, copy and test. On error `doc` may be partly patched; the message names the
// failing operation index and path.
absl::Status ApplyJsonPatch(json::Document& doc, std::string_view patch);

}  // namespace basalt::webhook
