#pragma once
// vc-webhook-manager's own flags (the client and runtime flags come from common/).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/client/flags.h"
#include "webhook/jobs/validate_job.h"

namespace basalt::webhook::server {

struct WebhookOptions {
  int port = 8443;
  std::string listen_address = "0.0.0.0";

  // Certificates: the three files, or --cert-dir, or --cert-secret (exactly one source).
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string ca_cert_file;
  std::string cert_dir;
  std::string cert_secret;  // "namespace/name"

  // The Service the API server dials (SANs of generated certificates).
  std::string service_name = "volcano-admission-service";
  std::string service_namespace = "volcano-system";
  // Mutating/ValidatingWebhookConfigurations whose caBundle is kept equal to the CA.
  std::vector<std::string> webhook_configurations;
  // Empty: every path Basalt serves.
  std::vector<std::string> enabled_admission;

  // Admission behaviour (AdmissionOptions).
  std::vector<std::string> scheduler_names = {"volcano"};
  int max_queue_depth = 5;
  bool root_queue_protection = true;
  bool create_default_queue = true;
  // Most replicas of one Job task and of all its tasks (AdmissionOptions::max_job_pods).
  int64_t max_job_pods = kDefaultMaxJobPods;

  // Serving limits.
  int workers = 4;
  int max_connections = 128;
  // Half the shipped configurations' timeoutSeconds (10): a stalled peer is cut off long
  // before the API server gives up on the call.
  int request_timeout_seconds = 5;
  // How long a kept-alive connection may wait for its next request. Above the API server's
  // own idle timeout for webhook connections (90 s, Go's http.Transport IdleConnTimeout as
  // client-go sets it), so the client always closes first: a server closing at the moment
  // the client reuses the connection makes that request fail ("connection reset by peer").
  int idle_timeout_seconds = 120;
  int shutdown_grace_seconds = 10;
  // How often user-supplied certificate files are checked for a rotation.
  int cert_reload_interval_seconds = 30;
  // For tests only: start the informers this many seconds late, so the window before the
  // caches have synced (admissions refused as not ready) is long enough to observe.
  int testing_informer_start_delay_seconds = 0;

  void AddFlags(client::FlagSet& flags);
  // Checks combinations: exactly one certificate source, NS/NAME for --cert-secret, ranges.
  absl::Status Validate() const;

  // Split --cert-secret; valid after Validate().
  std::string CertSecretNamespace() const;
  std::string CertSecretName() const;
  // "<listen-address>:<port>" for HttpServerOptions (IPv6 literals bracketed).
  std::string ServingAddress() const;
};

}  // namespace basalt::webhook::server
