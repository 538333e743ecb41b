#include "webhook/server/ca_bundle.h"

#include "absl/strings/escaping.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook::server {
namespace {

// Sets the caBundle in `config`; returns how many webhooks changed.
int SetCaBundles(json::Document& config, const std::string& ca_base64) {
  json::Value* webhooks = json::FindMutable(config, "webhooks");
  if (webhooks == nullptr || !webhooks->IsArray()) return 0;
  auto& a = config.GetAllocator();
  int changed = 0;
  for (auto& webhook : webhooks->GetArray()) {
    if (!webhook.IsObject()) continue;
    json::Value& client_config = json::EnsureObject(webhook, "clientConfig", a);
    if (json::GetString(client_config, "caBundle") == ca_base64) continue;
    json::Set(client_config, "caBundle", json::MakeString(ca_base64, a), a);
    ++changed;
  }
  return changed;
}

absl::StatusOr<int> SyncOne(client::Client& client, const client::ResourceRef& ref,
                            std::string_view name, const std::string& ca_base64) {
  int changed = 0;
  absl::Status s = client::RetryOnConflict(
      [&]() -> absl::Status {
        BASALT_ASSIGN_OR_RETURN(json::Document config, client.Get(ref, "", name));
        changed = SetCaBundles(config, ca_base64);
        if (changed == 0) return absl::OkStatus();
        return client.Update(ref, json::Serialize(config)).status();
      },
      /*max_attempts=*/10);
  if (!s.ok()) return s;
  return changed;
}

}  // namespace

client::ResourceRef MutatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", false,
          "MutatingWebhookConfiguration"};
}

client::ResourceRef ValidatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false,
          "ValidatingWebhookConfiguration"};
}

absl::StatusOr<int> SyncCaBundle(client::Client& client, std::string_view name,
                                 std::string_view ca_pem) {
  const std::string ca_base64 = absl::Base64Escape(std::string(ca_pem));
  int changed = 0;
  bool found = false;
  for (const client::ResourceRef& ref :
       {MutatingWebhookConfigurations(), ValidatingWebhookConfigurations()}) {
    absl::StatusOr<int> n = SyncOne(client, ref, name, ca_base64);
    if (n.ok()) {
      found = true;
      changed += *n;
      if (*n > 0) {
        BASALT_LOG_INFO("Patched caBundle", "kind", ref.kind, "name", name, "webhooks", *n);
      }
    } else if (n.status().code() != absl::StatusCode::kNotFound) {
      return n.status();
    }
  }
  if (!found) {
    return absl::NotFoundError(
        fmt::format("no Mutating- or ValidatingWebhookConfiguration named \"{}\"", name));
  }
  return changed;
}

}  // namespace basalt::webhook::server
