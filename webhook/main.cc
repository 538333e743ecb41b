// vc-webhook-manager: Basalt's admission webhook (Volcano-compatible paths and messages).
//
// Start-up: flags -> API client -> serving certificate (files, --cert-dir or --cert-secret)
// -> informer caches -> HTTPS server; then, in the background, the caBundle of the webhook
// configurations is kept equal to the CA and the `default` queue is created if missing.
// /readyz passes once the caches have synced and the HTTPS server listens; until the caches
// have synced, reviews whose verdict depends on them get 503 with Retry-After (the API server
// retries), never an answer from a half-filled cache. SIGTERM stops accepting, drains
// requests in progress and exits.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/client/client.h"
#include "common/client/flags.h"
#include "common/ctrlkit/default_queue.h"
#include "common/informer/informer_factory.h"
#include "common/runtime/flags.h"
#include "common/runtime/http_server.h"
#include "common/runtime/runner.h"
#include "common/runtime/tls.h"
#include "common/runtime/version.h"
#include "common/util/clock.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "common/util/stop.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "webhook/admission_router.h"
#include "webhook/fake_lister.h"
#include "webhook/server/admission_http.h"
#include "webhook/server/ca_bundle.h"
#include "webhook/server/cert_source.h"
#include "webhook/server/certs.h"
#include "webhook/server/informer_lister.h"
#include "webhook/server/options.h"

namespace basalt::webhook::server {
namespace {

constexpr char kComponent[] = "vc-webhook-manager";

absl::StatusOr<CertificateBundle> ObtainCertificate(const WebhookOptions& options,
                                                    client::Client& client) {
  if (!options.tls_cert_file.empty()) {
    return LoadCertificateFiles(options.tls_cert_file, options.tls_private_key_file,
                                options.ca_cert_file);
  }
  CertificateRequest request =
      WebhookCertificateRequest(options.service_name, options.service_namespace);
  if (!options.cert_dir.empty()) return EnsureCertificateDir(options.cert_dir, request);
  return EnsureCertificateSecret(client, options.CertSecretNamespace(), options.CertSecretName(),
                                 request);
}

// Wakes the caBundle sync loop when a webhook configuration it keeps is created or changed,
// e.g. a re-applied manifest that resets caBundle: the API server cannot call the webhook until
// it is restored, so waiting for the next periodic check would refuse admissions meanwhile.
class CaBundleWakeup {
 public:
  explicit CaBundleWakeup(Clock* clock) : clock_(clock) {}
  void Notify() {
    {
      std::lock_guard<std::mutex> l(mu_);
      pending_ = true;
    }
    cv_.notify_all();
  }
  // Waits up to `d` (on the clock) for Notify() or `stop`; true (and cleared) if notified.
  bool WaitFor(std::stop_token stop, std::chrono::milliseconds d) {
    const Clock::TimePoint deadline = clock_->Now() + d;
    // Before the lock: destroyed after it, so a concurrent callback (it takes mu_) can finish.
    std::stop_callback wake(stop, [this] {
      std::lock_guard<std::mutex> l(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> l(mu_);
    while (!pending_ && !stop.stop_requested() && clock_->Now() < deadline) {
      clock_->WaitUntil(l, cv_, deadline);
    }
    return std::exchange(pending_, false);
  }
  Clock* clock() const { return clock_; }

 private:
  Clock* const clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;
};

// Keeps every configured webhook configuration's caBundle equal to the current CA:
// configurations not there yet are retried every 2 s; all are re-checked when the informers
// report a change to one of them (`wakeup`), and every 30 s in any case.
absl::Status RunCaBundleSync(std::stop_token stop, client::Client& client,
                             const std::vector<std::string>& names,
                             const std::function<std::string()>& current_ca,
                             CaBundleWakeup& wakeup) {
  std::vector<bool> done(names.size(), false);
  Clock& clock = *wakeup.clock();
  Clock::TimePoint last_full = clock.Now();
  int rounds = 0;
  while (!stop.stop_requested()) {
    bool all_done = true;
    const std::string ca = current_ca();
    for (size_t i = 0; i < names.size(); ++i) {
      if (done[i]) continue;
      absl::StatusOr<int> r = SyncCaBundle(client, names[i], ca);
      if (r.ok()) {
        done[i] = true;
      } else {
        all_done = false;
        // Not found is expected while the manifests are being applied; say it now and then.
        if (r.status().code() != absl::StatusCode::kNotFound || rounds % 15 == 0) {
          BASALT_LOG_WARNING("Cannot sync caBundle", "configuration", names[i], "error",
                             MessageOf(r.status()));
        }
      }
    }
    ++rounds;
    const bool changed =
        wakeup.WaitFor(stop, all_done ? std::chrono::seconds(5) : std::chrono::seconds(2));
    if (stop.stop_requested()) break;
    if (changed || clock.Now() - last_full >= std::chrono::seconds(30)) {
      std::fill(done.begin(), done.end(), false);
      last_full = clock.Now();
    }
  }
  return absl::OkStatus();
}

// Creates the default queue (retrying: right after start-up the API server may not reach this
// webhook yet, and it admits the create), then waits for shutdown: a runnable that returns ends
// the process.
absl::Status RunDefaultQueue(std::stop_token stop, client::Client& client) {
  ctrlkit::EnsureDefaultQueueWithRetry(stop, client);
  SleepFor(stop, std::chrono::hours(24 * 365 * 100));
  return absl::OkStatus();
}

// For user-supplied files (cert-manager rotates them in place): reloads them when they
// change and serve new connections with the new certificate.
absl::Status RunCertificateReload(std::stop_token stop, const WebhookOptions& options,
                                  runtime::ServingCertificate& serving, CertificateBundle current,
                                  const std::function<void(const std::string&)>& on_new_ca) {
  while (SleepFor(stop, std::chrono::seconds(options.cert_reload_interval_seconds))) {
    absl::StatusOr<CertificateBundle> loaded = LoadCertificateFiles(
        options.tls_cert_file, options.tls_private_key_file, options.ca_cert_file);
    if (!loaded.ok()) {
      BASALT_LOG_WARNING("Cannot reload the serving certificate; keeping the current one", "error",
                         MessageOf(loaded.status()));
      continue;
    }
    if (loaded->cert_pem == current.cert_pem && loaded->key_pem == current.key_pem &&
        loaded->ca_cert_pem == current.ca_cert_pem) {
      continue;
    }
    if (absl::Status s = serving.Update(loaded->cert_pem, loaded->key_pem); !s.ok()) {
      BASALT_LOG_WARNING("Rejected the reloaded serving certificate", "error", MessageOf(s));
      continue;
    }
    current = *std::move(loaded);
    on_new_ca(current.ca_cert_pem);
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  runtime::RuntimeOptions runtime_options;
  if (std::optional<int> exit = runtime::HandleRuntimeFlags(kComponent, args, &runtime_options)) {
    return *exit;
  }

  client::FlagSet flags(kComponent);
  client::ClientOptions client_options;
  client_options.AddFlags(flags);
  WebhookOptions options;
  options.AddFlags(flags);
  if (std::optional<int> exit = runtime::HandleBinaryFlags(kComponent, flags, args)) {
    return *exit;
  }
  if (absl::Status s = options.Validate(); !s.ok()) {
    return runtime::UsageError(kComponent, MessageOf(s));
  }

  // Checked before anything touches the cluster: a typo in --enabled-admission is a start-up
  // error naming the path.
  FakeLister no_cluster;
  std::vector<std::string> ignored;
  absl::StatusOr<std::vector<std::string>> paths =
      ResolveEnabledPaths(*NewAdmissionRouter({.lister = &no_cluster, .options = {}}),
                          options.enabled_admission, &ignored);
  if (!paths.ok()) return runtime::UsageError(kComponent, MessageOf(paths.status()));
  for (const std::string& path : ignored) {
    BASALT_LOG_WARNING("Ignoring an admission path Basalt does not implement", "path", path);
  }

  // Everything the process owns; the Runner (declared last) is destroyed first.
  absl::StatusOr<std::unique_ptr<client::Client>> client =
      client::Client::FromOptions(client_options);
  if (!client.ok()) {
    BASALT_LOG_ERROR("Cannot configure the API client", "error", MessageOf(client.status()));
    return 1;
  }
  informer::SharedInformerFactory factory(client->get());
  InformerLister lister(&factory, client->get());
  AdmissionDeps deps;
  deps.lister = &lister;
  deps.options.scheduler_names = options.scheduler_names;
  deps.options.max_queue_depth = options.max_queue_depth;
  deps.options.root_queue_protection = options.root_queue_protection;
  deps.options.max_job_pods = options.max_job_pods;
  std::unique_ptr<Router> router = NewAdmissionRouter(deps);
  runtime::Runner runner(kComponent, runtime_options);
  BASALT_LOG_INFO("Starting", "version", runtime::VersionLine(kComponent), "paths",
                  fmt::format("{}", fmt::join(*paths, ",")));

  absl::StatusOr<CertificateBundle> bundle = ObtainCertificate(options, **client);
  // With --cert-secret the API server may not be reachable yet when the pod starts: retry for
  // a minute before giving up (and being restarted), rather than crash-looping at once.
  for (int attempt = 1; !bundle.ok() && !options.cert_secret.empty() && attempt < 30; ++attempt) {
    BASALT_LOG_WARNING("Cannot obtain the serving certificate yet", "attempt", attempt, "error",
                       MessageOf(bundle.status()));
    Clock::Real()->SleepFor(std::chrono::seconds(2));
    bundle = ObtainCertificate(options, **client);
  }
  if (!bundle.ok()) {
    BASALT_LOG_ERROR("Cannot obtain the serving certificate", "error", MessageOf(bundle.status()));
    return 1;
  }
  runtime::ServingCertificate serving;
  if (absl::Status s = serving.Update(bundle->cert_pem, bundle->key_pem); !s.ok()) {
    BASALT_LOG_ERROR("Cannot use the serving certificate", "error", MessageOf(s));
    return 1;
  }
  std::mutex ca_mu;
  std::string ca_pem = bundle->ca_cert_pem;
  auto current_ca = [&] {
    std::lock_guard<std::mutex> l(ca_mu);
    return ca_pem;
  };

  AdmissionMetrics metrics(*runner.metrics_registry(), *paths);
  runtime::HttpServerOptions server_options;
  server_options.address = options.ServingAddress();
  server_options.max_body_bytes = kMaxAdmissionReviewBytes;
  server_options.request_timeout = std::chrono::seconds(options.request_timeout_seconds);
  server_options.idle_timeout = std::chrono::seconds(options.idle_timeout_seconds);
  server_options.max_connections = options.max_connections;
  server_options.threads = options.workers;
  server_options.shutdown_grace = std::chrono::seconds(options.shutdown_grace_seconds);
  server_options.tls = serving.Provider();
  runtime::HttpServer https(std::move(server_options));
  // One check for both /readyz and the admission paths that read the caches.
  auto caches_synced = [&lister]() -> absl::Status {
    if (lister.HasSynced()) return absl::OkStatus();
    return absl::UnavailableError(
        fmt::format("caches not synced: {}", fmt::join(lister.Unsynced(), ",")));
  };
  RegisterAdmissionPaths(https.router(), *router, &metrics, *paths, caches_synced);
  std::atomic<bool> listening{false};

  runner.health().AddReadyzCheck("informers", caches_synced);
  runner.health().AddReadyzCheck("webhook-server", [&listening]() -> absl::Status {
    return listening.load() ? absl::OkStatus()
                            : absl::UnavailableError("admission server not listening");
  });
  if (options.testing_informer_start_delay_seconds == 0) {
    runner.AddComponent(
        "informers",
        [&factory] {
          factory.Start();
          return absl::OkStatus();
        },
        [&factory] { factory.Shutdown(); });
  } else {
    BASALT_LOG_WARNING("Starting the informers late (a testing flag)", "delay_seconds",
                       options.testing_informer_start_delay_seconds);
    runner.AddRunnable("informers", [&](std::stop_token stop) {
      if (SleepFor(stop, std::chrono::seconds(options.testing_informer_start_delay_seconds))) {
        factory.Start();
        SleepFor(stop, std::chrono::hours(24 * 365 * 100));
      }
      factory.Shutdown();
      return absl::OkStatus();
    });
  }
  runner.AddComponent(
      "admission-server",
      [&]() -> absl::Status {
        BASALT_RETURN_IF_ERROR(https.Start());
        listening = true;
        BASALT_LOG_INFO("Serving admission webhook", "address", options.listen_address, "port",
                        https.port());
        return absl::OkStatus();
      },
      [&] {
        listening = false;
        https.Stop();
      });
  CaBundleWakeup ca_bundle_wakeup(Clock::Real());
  if (!options.webhook_configurations.empty()) {
    auto kept = [&options](std::string_view name) {
      return std::find(options.webhook_configurations.begin(), options.webhook_configurations.end(),
                       name) != options.webhook_configurations.end();
    };
    for (const client::ResourceRef& kind :
         {MutatingWebhookConfigurations(), ValidatingWebhookConfigurations()}) {
      factory.InformerFor(kind)->AddEventHandler(
          {.on_add =
               [&, kept](const informer::Object& o) {
                 if (kept(o.name())) ca_bundle_wakeup.Notify();
               },
           .on_update =
               [&, kept](const informer::Object&, const informer::Object& o) {
                 if (kept(o.name())) ca_bundle_wakeup.Notify();
               }});
    }
    runner.AddRunnable("ca-bundle", [&](std::stop_token stop) {
      return RunCaBundleSync(stop, **client, options.webhook_configurations, current_ca,
                             ca_bundle_wakeup);
    });
  }
  if (options.create_default_queue) {
    runner.AddRunnable("default-queue",
                       [&](std::stop_token stop) { return RunDefaultQueue(stop, **client); });
  }
  if (!options.tls_cert_file.empty()) {
    runner.AddRunnable("certificate-reload", [&](std::stop_token stop) {
      return RunCertificateReload(stop, options, serving, *bundle, [&](const std::string& ca) {
        {
          std::lock_guard<std::mutex> l(ca_mu);
          ca_pem = ca;
        }
        ca_bundle_wakeup.Notify();  // patch the new CA in now, not at the next 30 s check
      });
    });
  }

  return runtime::ExitCode(runner.Run());
}

}  // namespace
}  // namespace basalt::webhook::server

int main(int argc, char** argv) { return basalt::webhook::server::Main(argc, argv); }
