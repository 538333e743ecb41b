#include "webhook/server/certs.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>
#include <string_view>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook::server {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using PKeyPtr = std::unique_ptr<EVP_PKEY, Free>;
using X509Ptr = std::unique_ptr<X509, Free>;
using BioPtr = std::unique_ptr<BIO, Free>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Free>;
using BnPtr = std::unique_ptr<BIGNUM, Free>;

// The last OpenSSL error as text (and clears the queue).
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

absl::Status Fail(std::string_view what) {
  return absl::InternalError(fmt::format("{}: {}", what, OpenSslError()));
}

absl::StatusOr<PKeyPtr> NewP256Key() {
  PKeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return Fail("generating an ECDSA P-256 key");
  return key;
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext) return Fail(fmt::format("building X509 extension {}={}", OBJ_nid2sn(nid), value));
  if (X509_add_ext(cert, ext.get(), -1) != 1) return Fail("adding X509 extension");
  return absl::OkStatus();
}

absl::StatusOr<X509Ptr> NewCertificate(EVP_PKEY* key, const std::string& common_name,
                                       std::chrono::hours validity) {
  X509Ptr cert(X509_new());
  if (!cert) return Fail("X509_new");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) return Fail("X509_set_version");
  // A random positive 127-bit serial (RFC 5280 allows up to 20 octets).
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return Fail("RAND_bytes");
  serial_bytes[0] &= 0x7f;
  BnPtr serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  if (!serial || BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return Fail("setting the serial number");
  }
  // Valid from an hour ago, so a client whose clock is a little behind accepts it.
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), 0,
                       static_cast<long>(std::chrono::seconds(validity).count()),
                       nullptr) == nullptr) {
    return Fail("setting the validity period");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    return Fail("setting the subject");
  }
  if (X509_set_pubkey(cert.get(), key) != 1) return Fail("X509_set_pubkey");
  return cert;
}

absl::StatusOr<std::string> CertToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return Fail("encoding a certificate");
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

absl::StatusOr<std::string> KeyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Fail("encoding a private key");
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

absl::StatusOr<X509Ptr> ParseCert(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!cert) {
    ERR_clear_error();
    return absl::InvalidArgumentError(fmt::format("{} is not a PEM certificate", what));
  }
  return cert;
}

absl::StatusOr<PKeyPtr> ParseKey(std::string_view pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PKeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the private key is not a PEM private key");
  }
  return key;
}

// True when `cert` is still valid at `at`.
bool ValidAt(X509* cert, std::chrono::system_clock::time_point at) {
  std::time_t t = std::chrono::system_clock::to_time_t(at);
  return X509_cmp_time(X509_get0_notAfter(cert), &t) > 0 &&
         X509_cmp_time(X509_get0_notBefore(cert), &t) < 0;
}

}  // namespace

constexpr size_t kMaxCommonNameLength = 64;  // ub-common-name, RFC 5280

CertificateRequest WebhookCertificateRequest(const std::string& service,
                                             const std::string& service_namespace) {
  CertificateRequest request;
  request.ip_addresses = {"127.0.0.1"};
  request.dns_names = {"localhost"};
  request.common_name = "localhost";
  if (!service.empty()) {
    const std::string ns = service_namespace.empty() ? "default" : service_namespace;
    request.common_name = fmt::format("{}.{}.svc", service, ns);
    // X.509 limits the common name to 64 characters (a release namespace of 40 would exceed
    // it and fail generation); clients match the DNS names below, so the Service name does.
    if (request.common_name.size() > kMaxCommonNameLength) {
      request.common_name = service.substr(0, kMaxCommonNameLength);
    }
    request.dns_names.push_back(service);
    request.dns_names.push_back(fmt::format("{}.{}", service, ns));
    request.dns_names.push_back(fmt::format("{}.{}.svc", service, ns));
    request.dns_names.push_back(fmt::format("{}.{}.svc.cluster.local", service, ns));
  }
  return request;
}

absl::StatusOr<CertificateBundle> GenerateSelfSignedBundle(const CertificateRequest& request) {
  BASALT_ASSIGN_OR_RETURN(PKeyPtr ca_key, NewP256Key());
  BASALT_ASSIGN_OR_RETURN(X509Ptr ca,
                          NewCertificate(ca_key.get(), "basalt-webhook-ca", request.validity));
  // Self-signed: the issuer is the subject.
  if (X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get())) != 1) {
    return Fail("setting the CA issuer");
  }
  BASALT_RETURN_IF_ERROR(
      AddExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE"));
  BASALT_RETURN_IF_ERROR(
      AddExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  BASALT_RETURN_IF_ERROR(AddExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(ca.get(), ca_key.get(), EVP_sha256()) == 0) return Fail("signing the CA");

  BASALT_ASSIGN_OR_RETURN(PKeyPtr key, NewP256Key());
  BASALT_ASSIGN_OR_RETURN(X509Ptr cert,
                          NewCertificate(key.get(), request.common_name, request.validity));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get())) != 1) {
    return Fail("setting the issuer");
  }
  std::string sans;
  for (const std::string& dns : request.dns_names) {
    sans += fmt::format("{}DNS:{}", sans.empty() ? "" : ",", dns);
  }
  for (const std::string& ip : request.ip_addresses) {
    sans += fmt::format("{}IP:{}", sans.empty() ? "" : ",", ip);
  }
  BASALT_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE"));
  BASALT_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature"));
  BASALT_RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_ext_key_usage, "serverAuth"));
  BASALT_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always"));
  if (!sans.empty()) {
    BASALT_RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_subject_alt_name, sans));
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return Fail("signing the serving certificate");
  }

  CertificateBundle bundle;
  BASALT_ASSIGN_OR_RETURN(bundle.ca_cert_pem, CertToPem(ca.get()));
  BASALT_ASSIGN_OR_RETURN(bundle.cert_pem, CertToPem(cert.get()));
  BASALT_ASSIGN_OR_RETURN(bundle.key_pem, KeyToPem(key.get()));
  return bundle;
}

absl::Status CheckUserSuppliedBundle(const CertificateBundle& bundle) {
  BASALT_ASSIGN_OR_RETURN(X509Ptr ca, ParseCert(bundle.ca_cert_pem, "the CA certificate"));
  BASALT_ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(bundle.cert_pem, "the serving certificate"));
  BASALT_ASSIGN_OR_RETURN(PKeyPtr key, ParseKey(bundle.key_pem));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError("the private key does not match the serving certificate");
  }
  return absl::OkStatus();
}

absl::Status CheckBundle(const CertificateBundle& bundle, const CertificateRequest& request,
                         std::chrono::system_clock::time_point now,
                         std::chrono::hours min_remaining) {
  BASALT_ASSIGN_OR_RETURN(X509Ptr ca, ParseCert(bundle.ca_cert_pem, "the CA certificate"));
  BASALT_ASSIGN_OR_RETURN(X509Ptr cert, ParseCert(bundle.cert_pem, "the serving certificate"));
  BASALT_ASSIGN_OR_RETURN(PKeyPtr key, ParseKey(bundle.key_pem));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::FailedPreconditionError("the private key does not match the serving certificate");
  }
  EVP_PKEY* ca_public = X509_get0_pubkey(ca.get());
  if (ca_public == nullptr || X509_verify(cert.get(), ca_public) != 1) {
    ERR_clear_error();
    return absl::FailedPreconditionError("the serving certificate is not signed by the CA");
  }
  for (X509* c : {ca.get(), cert.get()}) {
    if (!ValidAt(c, now) || !ValidAt(c, now + min_remaining)) {
      return absl::FailedPreconditionError(
          fmt::format("the {} certificate is not valid now or expires within {} hours",
                      c == ca.get() ? "CA" : "serving", min_remaining.count()));
    }
  }
  for (const std::string& dns : request.dns_names) {
    if (X509_check_host(cert.get(), dns.data(), dns.size(), X509_CHECK_FLAG_NO_WILDCARDS,
                        nullptr) != 1) {
      return absl::FailedPreconditionError(
          fmt::format("the serving certificate does not cover DNS name {}", dns));
    }
  }
  for (const std::string& ip : request.ip_addresses) {
    if (X509_check_ip_asc(cert.get(), ip.c_str(), 0) != 1) {
      return absl::FailedPreconditionError(
          fmt::format("the serving certificate does not cover IP address {}", ip));
    }
  }
  return absl::OkStatus();
}

}  // namespace basalt::webhook::server
