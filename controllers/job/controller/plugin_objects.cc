#include "controllers/job/controller/plugin_objects.h"

#include <string>

#include "common/api/views.h"
#include "common/client/errors.h"
#include "common/client/resource.h"

namespace basalt::controllers {
namespace {

client::ResourceRef ResourceOf(const json::Value& object) {
  return client::ResourceForKind(api::view::ApiVersion(object), api::view::Kind(object));
}

}  // namespace

bool IsJsonSubset(const json::Value& want, const json::Value& have) {
  if (want.IsObject()) {
    if (!have.IsObject()) return false;
    for (auto it = want.MemberBegin(); it != want.MemberEnd(); ++it) {
      const json::Value* h = json::Find(have, json::AsView(it->name));
      if (h == nullptr || !IsJsonSubset(it->value, *h)) return false;
    }
    return true;
  }
  return want == have;
}

absl::Status PluginObjects::Create(std::string_view ns,
                                   const std::vector<json::Document>& objects) {
  for (const json::Document& o : objects) {
    absl::StatusOr<json::Document> r = client_->Create(ResourceOf(o), ns, json::Serialize(o));
    if (!r.ok() && !absl::IsAlreadyExists(r.status())) return r.status();
  }
  return absl::OkStatus();
}

absl::Status PluginObjects::Apply(std::string_view ns, std::vector<json::Document> objects) {
  for (json::Document& o : objects) {
    const client::ResourceRef ref = ResourceOf(o);
    const std::string name(api::view::Name(o));
    absl::StatusOr<json::Document> existing = client_->Get(ref, ns, name);
    if (absl::IsNotFound(existing.status())) {
      absl::StatusOr<json::Document> r = client_->Create(ref, ns, json::Serialize(o));
      if (!r.ok() && !absl::IsAlreadyExists(r.status())) return r.status();
      continue;
    }
    if (!existing.ok()) return existing.status();
    bool same = true;
    for (auto it = o.MemberBegin(); it != o.MemberEnd() && same; ++it) {
      const std::string_view member = json::AsView(it->name);
      if (member == "metadata" || member == "status") continue;
      const json::Value* have = json::Find(*existing, member);
      if (have == nullptr || !IsJsonSubset(it->value, *have)) same = false;
    }
    if (same) continue;
    json::Value& meta = json::EnsureObject(o, "metadata", o.GetAllocator());
    json::Set(meta, "resourceVersion",
              json::MakeString(api::view::ResourceVersion(*existing), o.GetAllocator()),
              o.GetAllocator());
    absl::StatusOr<json::Document> r = client_->Update(ref, json::Serialize(o));
    if (!r.ok()) return r.status();
  }
  return absl::OkStatus();
}

absl::Status PluginObjects::Delete(const std::vector<ObjectRef>& refs) {
  for (const ObjectRef& ref : refs) {
    absl::Status s = client_->Delete(client::ResourceForKind(ref.api_version, ref.kind),
                                     ref.namespace_name, ref.name);
    if (!s.ok() && !absl::IsNotFound(s)) return s;
  }
  return absl::OkStatus();
}

}  // namespace basalt::controllers
