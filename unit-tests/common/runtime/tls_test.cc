#include "common/runtime/tls.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "common/runtime/http_server.h"
#include "unit-tests/common/runtime/http_test_client.h"

namespace basalt::runtime {
namespace {

struct Pem {
  std::string cert;
  std::string key;
};

std::string BioToString(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// A self-signed P-256 certificate for CN=localhost, valid for an hour.
Pem SelfSigned() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  REQUIRE(key != nullptr);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  REQUIRE(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0);

  std::unique_ptr<BIO, decltype(&BIO_free)> cert_bio(BIO_new(BIO_s_mem()), BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return Pem{BioToString(cert_bio.get()), BioToString(key_bio.get())};
}

// GET `path` over TLS (no verification: the test only checks that we serve HTTPS).
testing::RawResponse TlsFetch(int port, const std::string& path) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  const int fd = testing::Connect(port);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  testing::RawResponse response;
  if (SSL_connect(ssl.get()) == 1) {
    const std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    SSL_write(ssl.get(), request.data(), static_cast<int>(request.size()));
    std::string raw;
    char buf[4096];
    int n;
    while ((n = SSL_read(ssl.get(), buf, sizeof(buf))) > 0) raw.append(buf, n);
    response = testing::Parse(raw);
  }
  testing::Close(fd);
  return response;
}

TEST_CASE("ServingCertificate: HttpServer serves HTTPS with the current certificate",
          "[http][tls]") {
  const Pem pem = SelfSigned();
  ServingCertificate certificate;
  REQUIRE(certificate.Update(pem.cert, pem.key).ok());

  HttpServerOptions options;
  options.address = "127.0.0.1:0";
  options.tls = certificate.Provider();
  HttpServer server(options);
  server.Handle("GET", "/hello", [](const HttpRequest&) { return HttpResponse::Text(200, "tls"); });
  REQUIRE(server.Start().ok());

  auto response = TlsFetch(server.port(), "/hello");
  CHECK(response.status == 200);
  CHECK(response.body == "tls");

  // Rotation: new connections use the new certificate.
  const Pem rotated = SelfSigned();
  REQUIRE(certificate.Update(rotated.cert, rotated.key).ok());
  CHECK(TlsFetch(server.port(), "/hello").status == 200);

  // Plain HTTP on the TLS port is not answered as HTTP.
  CHECK(testing::Fetch(server.port(), "GET", "/hello").status == 0);
}

TEST_CASE("ServingCertificate: rejects bad PEM and mismatched keys, keeping the old one", "[tls]") {
  const Pem a = SelfSigned();
  const Pem b = SelfSigned();
  ServingCertificate certificate;
  CHECK(certificate.Provider()() == nullptr);
  CHECK(certificate.Update("not a cert", a.key).code() == absl::StatusCode::kInvalidArgument);
  CHECK(certificate.Update(a.cert, "not a key").code() == absl::StatusCode::kInvalidArgument);
  CHECK(certificate.Update(a.cert, b.key).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(certificate.Update(a.cert, a.key).ok());
  auto current = certificate.Provider()();
  CHECK(current != nullptr);
  CHECK_FALSE(certificate.Update(a.cert, b.key).ok());
  CHECK(certificate.Provider()() == current);
}

}  // namespace
}  // namespace basalt::runtime
