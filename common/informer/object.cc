#include "common/informer/object.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "rapidjson/allocators.h"

namespace basalt::informer {

namespace internal {
void PayloadTypeMismatch(std::string_view key) {
  BASALT_LOG_ERROR(
      "informer: object payload is not of the requested type (the informer's "
      "Transform and the caller disagree)",
      "key", key);
  std::abort();
}
}  // namespace internal

Object::Object(std::string key, std::string resource_version, TypeTag type,
               std::shared_ptr<const void> payload)
    : rep_(std::make_shared<const Rep>(
          Rep{std::move(key), std::move(resource_version), type, std::move(payload)})) {}

std::string_view Object::namespace_name() const { return SplitKey(rep_->key).first; }
std::string_view Object::name() const { return SplitKey(rep_->key).second; }

std::pair<std::string_view, std::string_view> SplitKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return {std::string_view(), key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

absl::StatusOr<std::string> KeyOf(const json::Value& object) {
  const json::Value* meta = json::Find(object, "metadata");
  std::string_view name = meta != nullptr ? json::GetString(*meta, "name") : std::string_view();
  if (name.empty()) return absl::InvalidArgumentError("object has no metadata.name");
  std::string_view ns = json::GetString(*meta, "namespace");
  if (ns.empty()) return std::string(name);
  return fmt::format("{}/{}", ns, name);
}

namespace {

// A Document together with the pool its values live in; the pool is declared first so it
// outlives the document's values.
struct PooledDocument {
  explicit PooledDocument(size_t chunk) : pool(chunk), doc(&pool) {}
  rapidjson::MemoryPoolAllocator<> pool;
  json::Document doc;
};

// Objects whose pool is at most this much larger than what they use are kept as they are.
constexpr size_t kSlack = 1024;

// The longest string a json::Value keeps inside itself (RapidJSON's short-string form, which
// depends on the pointer layout it was built with); measured once rather than assumed.
size_t ShortStringMax() {
  static const size_t max = [] {
    for (size_t n = 1; n < 64; ++n) {
      rapidjson::MemoryPoolAllocator<> pool(256);
      const std::string text(n, 'x');
      json::Value v(text.c_str(), static_cast<rapidjson::SizeType>(n), pool);
      if (pool.Size() > 0) return n - 1;
    }
    return size_t{0};
  }();
  return max;
}

// Bytes a deep copy of `v` takes from a memory pool: member and element arrays sized to their
// counts, and the strings too long for the short form, each block aligned as the pool aligns.
// A Document built member by member holds more than this in its own pool (every object and
// array starts with room for 16, and grown arrays leave their old blocks behind), so the
// source pool's Size() is not the size of the copy. Constant strings are counted although a
// copy shares them: a small overestimate, never an underestimate.
size_t CopySize(const json::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kObjectType: {
      size_t n = RAPIDJSON_ALIGN(v.MemberCount() * sizeof(json::Value::Member));
      for (const auto& m : v.GetObject()) n += CopySize(m.name) + CopySize(m.value);
      return n;
    }
    case rapidjson::kArrayType: {
      size_t n = RAPIDJSON_ALIGN(v.Size() * sizeof(json::Value));
      for (const auto& e : v.GetArray()) n += CopySize(e);
      return n;
    }
    case rapidjson::kStringType:
      return v.GetStringLength() > ShortStringMax() ? RAPIDJSON_ALIGN(v.GetStringLength() + 1) : 0;
    default:
      return 0;
  }
}

}  // namespace

std::shared_ptr<const json::Document> ShareDocument(json::Document&& doc) {
  const size_t used = doc.GetAllocator().Size();
  if (doc.GetAllocator().Capacity() <= used + kSlack) {
    return std::make_shared<const json::Document>(std::move(doc));
  }
  // One chunk of exactly what the deep copy allocates (plus a little): for a parsed document
  // that is about `used`, for one built member by member (a Transform's trimmed copy) it can be
  // a fifth of it.
  auto pooled = std::make_shared<PooledDocument>(std::max<size_t>(CopySize(doc), 1) + 16);
  pooled->doc.CopyFrom(doc, pooled->pool);
  return std::shared_ptr<const json::Document>(pooled, &pooled->doc);
}

Transform::Transform()
    : name_("document"), fn_([](json::Document&& doc) -> absl::StatusOr<Payload> {
        return Payload{TypeTagOf<json::Document>(), ShareDocument(std::move(doc))};
      }) {}

absl::StatusOr<Object> Transform::Apply(json::Document&& doc) const {
  BASALT_ASSIGN_OR_RETURN(std::string key, KeyOf(doc));
  std::string rv;
  if (const json::Value* meta = json::Find(doc, "metadata")) {
    rv = std::string(json::GetString(*meta, "resourceVersion"));
  }
  absl::StatusOr<Payload> payload = fn_(std::move(doc));
  if (!payload.ok()) {
    return Annotate(payload.status(), fmt::format("transform {} of {}", name_, key));
  }
  return Object(std::move(key), std::move(rv), payload->type, std::move(payload->data));
}

}  // namespace basalt::informer
