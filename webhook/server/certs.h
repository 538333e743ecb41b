#pragma once
// Serving certificates for the admission webhook, made with OpenSSL 3 (EVP/X509 APIs): a
// self-signed CA and a serving certificate it signs, and the checks that decide whether a
// stored pair can be reused.
//
// The API server verifies the webhook against the caBundle of the webhook configuration and
// the host name it dials (the Service DNS name in-cluster, 127.0.0.1 for local runs), so the
// serving certificate carries every such name as a SAN and the serverAuth extended key usage.
//
// Plain functions over PEM text; thread-safe.

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace basalt::webhook::server {

// PEM texts of one certificate set, as stored in a Secret (ca.crt, tls.crt, tls.key) or a
// certificate directory. The CA's key is not kept: a new serving certificate comes with a
// new CA.
struct CertificateBundle {
  std::string ca_cert_pem;
  std::string cert_pem;  // serving certificate (leaf)
  std::string key_pem;   // its private key (PKCS#8)
};

struct CertificateRequest {
  std::string common_name;                // of the serving certificate, e.g. "svc.ns.svc"
  std::vector<std::string> dns_names;     // SANs
  std::vector<std::string> ip_addresses;  // SANs, "127.0.0.1"
  std::chrono::hours validity{24 * 365 * 10};
};

// The SANs the webhook's serving certificate needs: 127.0.0.1, localhost and, when `service`
// is set, `<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`.
CertificateRequest WebhookCertificateRequest(const std::string& service,
                                             const std::string& service_namespace);

// Generates an ECDSA P-256 CA (CN "basalt-webhook-ca", basicConstraints CA:TRUE, keyCertSign)
// and a serving certificate signed by it (CA:FALSE, digitalSignature, serverAuth, the SANs of
// `request`), both valid from one hour ago (clock skew) for `request.validity`.
absl::StatusOr<CertificateBundle> GenerateSelfSignedBundle(const CertificateRequest& request);

// OK when `bundle` can be served for `request` at `now`: every PEM parses, the key matches
// the serving certificate, the CA signed it, it covers every SAN of `request`, and it stays
// valid for at least `min_remaining`. Otherwise kFailedPrecondition (or kInvalidArgument for
// unparsable PEM) saying why, so the caller regenerates.
absl::Status CheckBundle(const CertificateBundle& bundle, const CertificateRequest& request,
                         std::chrono::system_clock::time_point now,
                         std::chrono::hours min_remaining = std::chrono::hours(24 * 30));

// OK when `ca_pem` parses as one or more certificates and `cert_pem` / `key_pem` form a
// matching pair (user-supplied files: no SAN or CA checks, cert-manager knows best).
absl::Status CheckUserSuppliedBundle(const CertificateBundle& bundle);

}  // namespace basalt::webhook::server
