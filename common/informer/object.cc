#include "common/informer/object.h"

#include <cstdlib>

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

}  // namespace

std::shared_ptr<const json::Document> ShareDocument(json::Document&& doc) {
  const size_t used = doc.GetAllocator().Size();
  if (doc.GetAllocator().Capacity() <= used + kSlack) {
    return std::make_shared<const json::Document>(std::move(doc));
  }
  // A deep copy allocates the same sequence of blocks it did in the source pool, so `used`
  // (plus a little for alignment) fits in one chunk.
  auto pooled = std::make_shared<PooledDocument>(used + 64);
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
