// The webhook's writes to the cluster (the caBundle of webhook configurations), against a
// FakeTransport.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "common/client/testing/fake_transport.h"
#include "common/util/json.h"
#include "fmt/format.h"
#include "webhook/server/ca_bundle.h"

namespace basalt::webhook::server {
namespace {

using client::FakeTransport;

constexpr char kMutating[] =
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/basalt";
constexpr char kValidating[] =
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/basalt";
constexpr char kCa[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

std::string NotFound() {
  return R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})";
}

std::string Configuration(std::string_view kind, std::string_view ca_a, std::string_view ca_b,
                          std::string_view rv = "5") {
  return fmt::format(
      R"({{"apiVersion":"admissionregistration.k8s.io/v1","kind":"{}",)"
      R"("metadata":{{"name":"basalt","resourceVersion":"{}"}},"webhooks":[)"
      R"({{"name":"a.volcano.sh","clientConfig":{{"url":"https://127.0.0.1:1/a","caBundle":"{}"}},"sideEffects":"None"}},)"
      R"({{"name":"b.volcano.sh","clientConfig":{{"service":{{"name":"s","namespace":"n"}},"caBundle":"{}"}}}}]}})",
      kind, rv, ca_a, ca_b);
}

TEST_CASE("SyncCaBundle: writes the CA into every webhook that lacks it, keeping the rest",
          "[ca-bundle]") {
  const std::string ca64 = absl::Base64Escape(std::string(kCa));
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kMutating, 404, NotFound());
  t->AddJson("GET", kValidating, 200, Configuration("ValidatingWebhookConfiguration", "", ca64));
  t->AddJson("PUT", kValidating, 200, "{}");
  client::Client client(std::move(fake));
  auto changed = SyncCaBundle(client, "basalt", kCa);
  REQUIRE(changed.ok());
  CHECK(*changed == 1);
  auto put = json::Parse(t->last_request().body);
  REQUIRE(put.ok());
  const json::Value& webhooks = *json::Find(*put, "webhooks");
  for (const auto& w : webhooks.GetArray()) {
    CHECK(json::GetString(*json::Find(w, "clientConfig"), "caBundle") == ca64);
  }
  CHECK(json::GetString(webhooks[0], "sideEffects") == "None");
  CHECK(json::GetString(*json::Find(*put, "metadata"), "resourceVersion") == "5");
}

TEST_CASE("SyncCaBundle: no write when the caBundle already matches", "[ca-bundle]") {
  const std::string ca64 = absl::Base64Escape(std::string(kCa));
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kMutating, 200, Configuration("MutatingWebhookConfiguration", ca64, ca64));
  t->AddJson("GET", kValidating, 404, NotFound());
  client::Client client(std::move(fake));
  auto changed = SyncCaBundle(client, "basalt", kCa);
  REQUIRE(changed.ok());
  CHECK(*changed == 0);
  CHECK(t->requests().size() == 2);
}

TEST_CASE("SyncCaBundle: re-reads and retries on 409 Conflict", "[ca-bundle]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kMutating, 200, Configuration("MutatingWebhookConfiguration", "", "", "5"));
  t->AddJson("PUT", kMutating, 409,
             R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409})");
  t->AddJson("GET", kMutating, 200, Configuration("MutatingWebhookConfiguration", "", "", "6"));
  t->AddJson("PUT", kMutating, 200, "{}");
  t->AddJson("GET", kValidating, 404, NotFound());
  client::Client client(std::move(fake));
  auto changed = SyncCaBundle(client, "basalt", kCa);
  REQUIRE(changed.ok());
  CHECK(*changed == 2);
  auto put = json::Parse(t->requests()[3].body);
  REQUIRE(put.ok());
  CHECK(json::GetString(*json::Find(*put, "metadata"), "resourceVersion") == "6");
}

TEST_CASE("SyncCaBundle: kNotFound when neither kind has the name", "[ca-bundle]") {
  auto fake = std::make_unique<FakeTransport>();
  fake->AddJson("GET", kMutating, 404, NotFound());
  fake->AddJson("GET", kValidating, 404, NotFound());
  client::Client client(std::move(fake));
  CHECK(SyncCaBundle(client, "basalt", kCa).status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace basalt::webhook::server
