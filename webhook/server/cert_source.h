#pragma once
// Where the webhook's serving certificate comes from (one of, chosen by flags):
//  - user-supplied files (--tls-cert-file, --tls-private-key-file, --ca-cert-file), e.g.
//    written by cert-manager;
//  - a local directory (--cert-dir): a self-signed CA and serving certificate are generated
//    there on first start and reused while they are valid and cover the needed names;
//  - a Secret (--cert-secret NS/NAME, in-cluster): the same, kept in a kubernetes.io/tls
//    Secret with tls.crt, tls.key and ca.crt, so every replica serves the same CA.
//
// Thread-compatible functions; the Secret variant is safe against other replicas starting at
// the same time (create-or-reuse: whoever loses the create race reads and uses the winner's).

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "common/client/client.h"
#include "webhook/server/certs.h"

namespace basalt::webhook::server {

// Reads the three PEM files and checks that the key matches the certificate.
absl::StatusOr<CertificateBundle> LoadCertificateFiles(const std::string& cert_file,
                                                       const std::string& key_file,
                                                       const std::string& ca_file);

// Reuses ca.crt, tls.crt and tls.key in `dir` when CheckBundle accepts them for `request`,
// otherwise generates new ones and writes them (key mode 0600, written atomically). Creates
// `dir` if needed.
absl::StatusOr<CertificateBundle> EnsureCertificateDir(const std::string& dir,
                                                       const CertificateRequest& request);

// The same with the Secret `ns`/`name`: reuses its data when valid; otherwise creates it, or
// updates it (conditional on its resourceVersion). A lost race (AlreadyExists, Conflict)
// re-reads the Secret and adopts what the other writer stored.
absl::StatusOr<CertificateBundle> EnsureCertificateSecret(client::Client& client,
                                                          const std::string& ns,
                                                          const std::string& name,
                                                          const CertificateRequest& request);

}  // namespace basalt::webhook::server
