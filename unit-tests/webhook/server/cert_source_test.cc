#include "webhook/server/cert_source.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "common/client/testing/fake_transport.h"
#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::webhook::server {
namespace {

using client::FakeTransport;

constexpr char kSecretPath[] = "/api/v1/namespaces/volcano-system/secrets/volcano-admission-secret";
constexpr char kSecretsPath[] = "/api/v1/namespaces/volcano-system/secrets";

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("basalt-certs-test-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string SecretJson(const CertificateBundle& b, std::string_view resource_version = "7") {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"volcano-admission-secret",)"
      R"("namespace":"volcano-system","resourceVersion":"{}"}},"type":"kubernetes.io/tls",)"
      R"("data":{{"ca.crt":"{}","tls.crt":"{}","tls.key":"{}"}}}})",
      resource_version, absl::Base64Escape(b.ca_cert_pem), absl::Base64Escape(b.cert_pem),
      absl::Base64Escape(b.key_pem));
}

std::string NotFound() {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404})";
}

const CertificateRequest& Request() {
  static const CertificateRequest kRequest =
      WebhookCertificateRequest("volcano-admission-service", "volcano-system");
  return kRequest;
}

TEST_CASE("EnsureCertificateDir: generates once, then reuses the same files", "[certs]") {
  TempDir dir;
  auto first = EnsureCertificateDir(dir.path() + "/nested", Request());
  REQUIRE(first.ok());
  CHECK(ReadAll(dir.path() + "/nested/ca.crt") == first->ca_cert_pem);
  CHECK(ReadAll(dir.path() + "/nested/tls.crt") == first->cert_pem);
  CHECK((std::filesystem::status(dir.path() + "/nested/tls.key").permissions() &
         std::filesystem::perms::others_read) == std::filesystem::perms::none);
  auto second = EnsureCertificateDir(dir.path() + "/nested", Request());
  REQUIRE(second.ok());
  CHECK(second->ca_cert_pem == first->ca_cert_pem);
  CHECK(second->cert_pem == first->cert_pem);
}

TEST_CASE("EnsureCertificateDir: regenerates when the names change or a file is broken",
          "[certs]") {
  TempDir dir;
  auto first = EnsureCertificateDir(dir.path(), WebhookCertificateRequest("", ""));
  REQUIRE(first.ok());
  auto renamed = EnsureCertificateDir(dir.path(), Request());
  REQUIRE(renamed.ok());
  CHECK(renamed->ca_cert_pem != first->ca_cert_pem);
  std::ofstream(dir.path() + "/tls.key") << "broken";
  auto repaired = EnsureCertificateDir(dir.path(), Request());
  REQUIRE(repaired.ok());
  CHECK(repaired->cert_pem != renamed->cert_pem);
  CHECK(CheckBundle(*repaired, Request(), std::chrono::system_clock::now()).ok());
}

TEST_CASE("LoadCertificateFiles: reads user-supplied PEM files and refuses mismatches", "[certs]") {
  TempDir dir;
  auto generated = EnsureCertificateDir(dir.path(), Request());
  REQUIRE(generated.ok());
  auto loaded = LoadCertificateFiles(dir.path() + "/tls.crt", dir.path() + "/tls.key",
                                     dir.path() + "/ca.crt");
  REQUIRE(loaded.ok());
  CHECK(loaded->cert_pem == generated->cert_pem);
  CHECK(LoadCertificateFiles(dir.path() + "/tls.crt", dir.path() + "/missing.key",
                             dir.path() + "/ca.crt")
            .status()
            .code() == absl::StatusCode::kNotFound);
  CHECK(
      LoadCertificateFiles(dir.path() + "/ca.crt", dir.path() + "/tls.key", dir.path() + "/ca.crt")
          .status()
          .code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("EnsureCertificateSecret: reuses a valid Secret without writing", "[certs]") {
  CertificateBundle existing = *GenerateSelfSignedBundle(Request());
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kSecretPath, 200, SecretJson(existing));
  client::Client client(std::move(fake));
  auto bundle =
      EnsureCertificateSecret(client, "volcano-system", "volcano-admission-secret", Request());
  REQUIRE(bundle.ok());
  CHECK(bundle->ca_cert_pem == existing.ca_cert_pem);
  CHECK(t->requests().size() == 1);
}

TEST_CASE("EnsureCertificateSecret: creates a missing Secret of type kubernetes.io/tls",
          "[certs]") {
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kSecretPath, 404, NotFound());
  t->AddJson("POST", kSecretsPath, 201, "{}");
  client::Client client(std::move(fake));
  auto bundle =
      EnsureCertificateSecret(client, "volcano-system", "volcano-admission-secret", Request());
  REQUIRE(bundle.ok());
  auto posted = json::Parse(t->last_request().body);
  REQUIRE(posted.ok());
  CHECK(json::GetString(*posted, "type") == "kubernetes.io/tls");
  std::string ca;
  REQUIRE(absl::Base64Unescape(std::string(json::GetString(*json::Find(*posted, "data"), "ca.crt")),
                               &ca));
  CHECK(ca == bundle->ca_cert_pem);
}

TEST_CASE("EnsureCertificateSecret: a replica that loses the create race adopts the winner's",
          "[certs]") {
  CertificateBundle winner = *GenerateSelfSignedBundle(Request());
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kSecretPath, 404, NotFound());
  t->AddJson("POST", kSecretsPath, 409,
             R"({"kind":"Status","status":"Failure","reason":"AlreadyExists","code":409})");
  t->AddJson("GET", kSecretPath, 200, SecretJson(winner));
  client::Client client(std::move(fake));
  auto bundle =
      EnsureCertificateSecret(client, "volcano-system", "volcano-admission-secret", Request());
  REQUIRE(bundle.ok());
  CHECK(bundle->ca_cert_pem == winner.ca_cert_pem);
  CHECK(bundle->key_pem == winner.key_pem);
}

TEST_CASE(
    "EnsureCertificateSecret: replaces an invalid Secret conditionally, adopting a "
    "concurrent fix on conflict",
    "[certs]") {
  CertificateBundle stale = *GenerateSelfSignedBundle(WebhookCertificateRequest("old", "ns"));
  CertificateBundle fixed = *GenerateSelfSignedBundle(Request());
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport* t = fake.get();
  t->AddJson("GET", kSecretPath, 200, SecretJson(stale, "7"));
  t->AddJson("PUT", kSecretPath, 409,
             R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409})");
  t->AddJson("GET", kSecretPath, 200, SecretJson(fixed, "8"));
  client::Client client(std::move(fake));
  auto bundle =
      EnsureCertificateSecret(client, "volcano-system", "volcano-admission-secret", Request());
  REQUIRE(bundle.ok());
  CHECK(bundle->cert_pem == fixed.cert_pem);
  auto put = json::Parse(t->requests()[1].body);
  REQUIRE(put.ok());
  CHECK(json::GetString(*json::Find(*put, "metadata"), "resourceVersion") == "7");
}

}  // namespace
}  // namespace basalt::webhook::server
