#pragma once
// Keeps the caBundle of Basalt's webhook configurations equal to the CA that signed the
// serving certificate, so the API server trusts the webhook. The configurations are shipped
// as YAML (manifests/base/webhooks.yaml) without a caBundle; the webhook fills it in.
//
// Thread-compatible; the Client is thread-safe.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/client/client.h"

namespace basalt::webhook::server {

client::ResourceRef MutatingWebhookConfigurations();
client::ResourceRef ValidatingWebhookConfigurations();

// Sets clientConfig.caBundle of every webhook in the Mutating- and/or
// ValidatingWebhookConfiguration named `name` to `ca_pem`, writing only when some webhook
// differs (an update conditional on the resourceVersion, re-read and retried on 409).
// Returns how many webhooks were changed; kNotFound when no configuration of either kind
// has that name.
absl::StatusOr<int> SyncCaBundle(client::Client& client, std::string_view name,
                                 std::string_view ca_pem);

}  // namespace basalt::webhook::server
