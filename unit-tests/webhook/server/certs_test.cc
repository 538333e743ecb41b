#include "webhook/server/certs.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

namespace basalt::webhook::server {
namespace {

using std::chrono::hours;
using std::chrono::system_clock;

const CertificateRequest& ServiceRequest() {
  static const CertificateRequest kRequest =
      WebhookCertificateRequest("volcano-admission-service", "volcano-system");
  return kRequest;
}

const CertificateBundle& Bundle() {
  static const CertificateBundle kBundle = *GenerateSelfSignedBundle(ServiceRequest());
  return kBundle;
}

// Extended key usage flags of a PEM certificate (XKU_SSL_SERVER, ...).
uint32_t ExtendedKeyUsage(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  REQUIRE(cert != nullptr);
  uint32_t usage = X509_get_extended_key_usage(cert);
  X509_free(cert);
  return usage;
}

TEST_CASE("WebhookCertificateRequest: loopback plus every Service DNS name", "[certs]") {
  const CertificateRequest& r = ServiceRequest();
  CHECK(r.ip_addresses == std::vector<std::string>{"127.0.0.1"});
  CHECK(r.dns_names ==
        std::vector<std::string>{"localhost", "volcano-admission-service",
                                 "volcano-admission-service.volcano-system",
                                 "volcano-admission-service.volcano-system.svc",
                                 "volcano-admission-service.volcano-system.svc.cluster.local"});
  CHECK(r.common_name == "volcano-admission-service.volcano-system.svc");
  CHECK(WebhookCertificateRequest("", "").dns_names == std::vector<std::string>{"localhost"});
}

TEST_CASE("WebhookCertificateRequest: a long release namespace still gives a certificate",
          "[certs]") {
  const std::string ns(50, 'n');
  const CertificateRequest r = WebhookCertificateRequest("volcano-admission-service", ns);
  CHECK(r.common_name == "volcano-admission-service");
  CHECK(r.dns_names.back() == "volcano-admission-service." + ns + ".svc.cluster.local");
  absl::StatusOr<CertificateBundle> b = GenerateSelfSignedBundle(r);
  REQUIRE(b.ok());
  CHECK(CheckBundle(*b, r, system_clock::now()).ok());
}

TEST_CASE("GenerateSelfSignedBundle: a CA-signed serving certificate the checks accept",
          "[certs]") {
  const CertificateBundle& b = Bundle();
  CHECK(b.ca_cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
  CHECK(b.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
  CHECK(b.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
  CHECK(b.ca_cert_pem != b.cert_pem);
  CHECK(CheckBundle(b, ServiceRequest(), system_clock::now()).ok());
  CHECK(CheckUserSuppliedBundle(b).ok());
  CHECK((ExtendedKeyUsage(b.cert_pem) & XKU_SSL_SERVER) != 0);
}

TEST_CASE("CheckBundle: names the reason to regenerate", "[certs]") {
  const CertificateBundle& b = Bundle();
  SECTION("a Service name the certificate does not cover") {
    absl::Status s = CheckBundle(b, WebhookCertificateRequest("other-service", "volcano-system"),
                                 system_clock::now());
    CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(s.message()).find("other-service") != std::string::npos);
  }
  SECTION("an IP address it does not cover") {
    CertificateRequest r = ServiceRequest();
    r.ip_addresses.push_back("10.0.0.1");
    CHECK(CheckBundle(b, r, system_clock::now()).code() == absl::StatusCode::kFailedPrecondition);
  }
  SECTION("expiring within the renewal margin (10 years from now)") {
    absl::Status s = CheckBundle(b, ServiceRequest(), system_clock::now() + hours(24 * 3650));
    CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(s.message()).find("expires") != std::string::npos);
  }
  SECTION("a key of another certificate") {
    CertificateBundle mixed = b;
    mixed.key_pem = GenerateSelfSignedBundle(ServiceRequest())->key_pem;
    CHECK(CheckBundle(mixed, ServiceRequest(), system_clock::now()).code() ==
          absl::StatusCode::kFailedPrecondition);
    CHECK(CheckUserSuppliedBundle(mixed).code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("a serving certificate of another CA") {
    CertificateBundle mixed = b;
    mixed.ca_cert_pem = GenerateSelfSignedBundle(ServiceRequest())->ca_cert_pem;
    absl::Status s = CheckBundle(mixed, ServiceRequest(), system_clock::now());
    CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(s.message()).find("not signed by the CA") != std::string::npos);
  }
  SECTION("text that is not PEM") {
    CertificateBundle broken = b;
    broken.cert_pem = "garbage";
    CHECK(CheckBundle(broken, ServiceRequest(), system_clock::now()).code() ==
          absl::StatusCode::kInvalidArgument);
    broken = b;
    broken.key_pem = "";
    CHECK(CheckBundle(broken, ServiceRequest(), system_clock::now()).code() ==
          absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace basalt::webhook::server
