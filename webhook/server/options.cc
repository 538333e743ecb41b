#include "webhook/server/options.h"

#include "common/runtime/flags.h"
#include "fmt/format.h"

namespace basalt::webhook::server {

void WebhookOptions::AddFlags(client::FlagSet& flags) {
  flags.Int("port", &port, "HTTPS port of the admission endpoints");
  flags.String("listen-address", &listen_address,
               "Address to listen on (0.0.0.0 in-cluster, 127.0.0.1 for local runs)");
  flags.String("tls-cert-file", &tls_cert_file,
               "Serving certificate (PEM; with --tls-private-key-file and --ca-cert-file, e.g. "
               "from cert-manager)");
  flags.String("tls-private-key-file", &tls_private_key_file, "Private key of --tls-cert-file");
  flags.String("ca-cert-file", &ca_cert_file,
               "CA that signed --tls-cert-file (written to the webhook configurations' caBundle)");
  flags.String("cert-dir", &cert_dir,
               "Generate a self-signed CA and serving certificate in this directory (reused "
               "while valid)");
  flags.String("cert-secret", &cert_secret,
               "NAMESPACE/NAME of a Secret to keep the generated CA and serving certificate in "
               "(created or reused; in-cluster)");
  flags.String("service-name", &service_name,
               "Service the API server reaches the webhook through (certificate SANs)");
  flags.String("service-namespace", &service_namespace, "Namespace of --service-name");
  flags.StringList("webhook-configurations", &webhook_configurations,
                   "Mutating/ValidatingWebhookConfigurations whose caBundle is patched to the CA");
  flags.StringList("enabled-admission", &enabled_admission,
                   "Admission paths to serve (default: all of /cronjobs/validate,/jobs/mutate,"
                   "/jobs/validate,"
                   "/podgroups/mutate,/podgroups/validate,/pods/validate,/queues/mutate,"
                   "/queues/validate)");
  flags.StringList("scheduler-name", &scheduler_names,
                   "Scheduler names of Basalt (the first is the Job default)");
  flags.Int("max-queue-depth", &max_queue_depth, "Maximum depth of the queue hierarchy");
  flags.Bool("enable-root-queue-protection", &root_queue_protection,
             "Refuse changes to the root queue's capability, deserved and guarantee");
  flags.Bool("create-default-queue", &create_default_queue,
             "Create the `default` queue at start-up if it is missing");
  flags.Int64("max-job-pods", &max_job_pods,
              "Most replicas one Job task may have, and all tasks of a Job together; larger Jobs "
              "are refused at admission");
  flags.Int("workers", &workers, "Threads serving admission requests");
  flags.Int("max-connections", &max_connections,
            "Open connections at most; further clients wait in the listen backlog");
  flags.Int("request-timeout", &request_timeout_seconds,
            "Seconds one request may take to arrive and be answered; keep it well below the "
            "webhook configurations' timeoutSeconds (10)");
  flags.Int("idle-timeout", &idle_timeout_seconds,
            "Seconds a kept-alive connection may wait for its next request; keep it above the "
            "API server's idle timeout for webhook connections (90)");
  flags.Int("shutdown-grace", &shutdown_grace_seconds,
            "Seconds requests in progress may take to finish on SIGTERM");
  flags.Int("cert-reload-interval", &cert_reload_interval_seconds,
            "Seconds between checks of --tls-cert-file, --tls-private-key-file and --ca-cert-file "
            "for a rotated certificate (served to new connections, CA patched into caBundle)");
  flags.Int("testing-informer-start-delay", &testing_informer_start_delay_seconds,
            "For tests only: seconds to wait before starting the informers (admissions that "
            "read the caches are refused as not ready meanwhile)");
}

absl::Status WebhookOptions::Validate() const {
  using runtime::CheckAtLeast;
  using runtime::CheckInRange;
  if (absl::Status s =
          runtime::FirstError({CheckInRange("port", port, 0, 65535),
                               runtime::CheckNotEmpty("listen-address", listen_address)});
      !s.ok()) {
    return s;
  }
  const int files = !tls_cert_file.empty() + !tls_private_key_file.empty() + !ca_cert_file.empty();
  if (files != 0 && files != 3) {
    return absl::InvalidArgumentError(
        "--tls-cert-file, --tls-private-key-file and --ca-cert-file go together");
  }
  const int sources = (files == 3) + !cert_dir.empty() + !cert_secret.empty();
  if (sources != 1) {
    return absl::InvalidArgumentError(
        "exactly one certificate source is needed: --tls-cert-file/--tls-private-key-file/"
        "--ca-cert-file, --cert-dir, or --cert-secret");
  }
  if (!cert_secret.empty()) {
    auto slash = cert_secret.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == cert_secret.size() ||
        cert_secret.find('/', slash + 1) != std::string::npos) {
      return absl::InvalidArgumentError(
          fmt::format("--cert-secret: must be NAMESPACE/NAME, got \"{}\"", cert_secret));
    }
  }
  if (scheduler_names.empty())
    return absl::InvalidArgumentError("--scheduler-name: must not be empty");
  // Seconds for the timeouts and intervals; task indexes and pod counts are int32 in the Job
  // API (--max-job-pods).
  return runtime::FirstError({
      CheckAtLeast("max-queue-depth", max_queue_depth, 1),
      CheckInRange("workers", workers, 1, 256),
      CheckAtLeast("max-connections", max_connections, 1),
      CheckInRange("request-timeout", request_timeout_seconds, 1, 30),
      CheckInRange("idle-timeout", idle_timeout_seconds, 1, 3600),
      CheckInRange("max-job-pods", max_job_pods, 1, 2147483647),
      CheckAtLeast("testing-informer-start-delay", testing_informer_start_delay_seconds, 0),
      CheckAtLeast("shutdown-grace", shutdown_grace_seconds, 0),
      CheckAtLeast("cert-reload-interval", cert_reload_interval_seconds, 1),
  });
}

std::string WebhookOptions::CertSecretNamespace() const {
  return cert_secret.substr(0, cert_secret.find('/'));
}

std::string WebhookOptions::CertSecretName() const {
  auto slash = cert_secret.find('/');
  return slash == std::string::npos ? cert_secret : cert_secret.substr(slash + 1);
}

std::string WebhookOptions::ServingAddress() const {
  if (listen_address.find(':') != std::string::npos && listen_address.front() != '[') {
    return fmt::format("[{}]:{}", listen_address, port);
  }
  return fmt::format("{}:{}", listen_address, port);
}

}  // namespace basalt::webhook::server
