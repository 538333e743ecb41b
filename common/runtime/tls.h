#pragma once
// Server certificates for HttpServer's HTTPS (the admission webhook). Callers need no Boost:
// they hand PEM text in and get a TlsContextProvider out.

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "common/runtime/http_server.h"

namespace basalt::runtime {

// ServingCertificate holds the current certificate and key as a TLS context and lets them
// be replaced while the server runs (certificate rotation): new connections use the new
// context, connections already open keep theirs.
//
// Thread-safe. The providers returned by Provider() share the state, so they stay valid
// after this object is destroyed.
class ServingCertificate {
 public:
  ServingCertificate();

  // Builds a TLS 1.2+ server context from a PEM certificate chain (leaf first) and its PEM
  // private key, and makes it current. Returns kInvalidArgument if either does not parse
  // or they do not match; the previous context then stays current.
  absl::Status Update(std::string_view cert_chain_pem, std::string_view private_key_pem);

  // For HttpServerOptions::tls. Yields nullptr (connection refused) until the first
  // successful Update().
  TlsContextProvider Provider() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace basalt::runtime
