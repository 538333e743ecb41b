#include "common/runtime/runner.h"

#include <utility>

#include "common/runtime/metrics.h"
#include "common/runtime/signals.h"
#include "common/runtime/version.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::runtime {

Runner::Runner(std::string component, RuntimeOptions options, RunnerOptions runner_options)
    : component_(std::move(component)),
      options_(std::move(options)),
      runner_options_(runner_options),
      registry_(std::make_shared<prometheus::Registry>()) {
  log::SetVerbosity(options_.verbosity);
}

Runner::~Runner() = default;

void Runner::AddComponent(std::string name, std::function<absl::Status()> start,
                          std::function<void()> stop) {
  components_.push_back(Component{std::move(name), std::move(start), std::move(stop)});
}

void Runner::AddRunnable(std::string name, std::function<absl::Status(std::stop_token)> run) {
  // Shared by the start and stop functions; the thread has its own stop_token so that
  // runnables can be stopped one by one, in order.
  auto thread = std::make_shared<std::jthread>();
  auto start = [this, thread, name, run = std::move(run)]() {
    *thread = std::jthread([this, name, run](std::stop_token stop) {
      absl::Status status = run(stop);
      if (stop.stop_requested()) {
        if (!status.ok()) {
          BASALT_LOG_WARNING("Component stopped with an error", "component", name, "error",
                             MessageOf(status));
        }
        return;
      }
      // Returned on its own: the process must not go on without it.
      Fail(status.ok() ? absl::AbortedError(fmt::format("{} exited unexpectedly", name))
                       : Annotate(status, name));
    });
    return absl::OkStatus();
  };
  auto stop = [thread] {
    if (thread->joinable()) {
      thread->request_stop();
      thread->join();
    }
  };
  AddComponent(std::move(name), std::move(start), std::move(stop));
}

void Runner::Fail(absl::Status status) {
  BASALT_LOG_ERROR("Component failed; shutting down", "error", MessageOf(status));
  {
    std::lock_guard<std::mutex> l(mu_);
    if (first_error_.ok()) first_error_ = std::move(status);
  }
  RequestStop();
}

void Runner::RequestStop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_requested_) return;
    stop_requested_ = true;
    cond_.notify_all();
  }
  stop_source_.request_stop();
}

absl::Status Runner::StartServers() {
  HttpServerOptions server_options;
  server_options.threads = runner_options_.http_threads;
  if (!options_.metrics_addr.empty()) {
    server_options.address = options_.metrics_addr;
    metrics_server_ = std::make_unique<HttpServer>(server_options);
    RegisterMetrics(metrics_server_->router(), {registry_});
  }
  if (!options_.health_addr.empty()) {
    if (metrics_server_ != nullptr && options_.health_addr == options_.metrics_addr) {
      health_.RegisterOn(metrics_server_->router());
    } else {
      server_options.address = options_.health_addr;
      health_server_ = std::make_unique<HttpServer>(server_options);
      health_.RegisterOn(health_server_->router());
    }
  }
  if (metrics_server_ != nullptr) {
    BASALT_RETURN_IF_ERROR(Annotate(metrics_server_->Start(), "metrics server"));
  }
  if (health_server_ != nullptr) {
    BASALT_RETURN_IF_ERROR(Annotate(health_server_->Start(), "health server"));
  }
  return absl::OkStatus();
}

absl::Status Runner::Run() {
  BASALT_LOG_INFO("Starting", "component", component_, "version", BasaltVersion(), "verbosity",
                  options_.verbosity);
  const auto mark_started = [this] {
    std::lock_guard<std::mutex> l(mu_);
    started_ = true;
    cond_.notify_all();
  };
  const auto stop_servers = [this] {
    if (health_server_ != nullptr) health_server_->Stop();
    if (metrics_server_ != nullptr) metrics_server_->Stop();
  };

  if (absl::Status s = StartServers(); !s.ok()) {
    stop_servers();
    mark_started();
    return s;
  }
  SignalWatcher signals([this](int) { RequestStop(); });
  if (runner_options_.handle_signals) {
    if (absl::Status s = signals.Start(); !s.ok()) {
      stop_servers();
      mark_started();
      return s;
    }
  }

  std::size_t started = 0;
  for (; started < components_.size(); ++started) {
    if (stop_token().stop_requested()) break;  // A signal during start-up.
    const Component& c = components_[started];
    BASALT_VLOG(1, "Starting component", "component", c.name);
    if (absl::Status s = c.start(); !s.ok()) {
      Fail(Annotate(s, fmt::format("starting {}", c.name)));
      break;
    }
  }
  mark_started();
  BASALT_LOG_INFO("Running", "component", component_, "components", started);

  {
    std::unique_lock<std::mutex> l(mu_);
    cond_.wait(l, [this] { return stop_requested_; });
  }

  BASALT_LOG_INFO("Shutting down", "component", component_);
  health_.SetShuttingDown();
  while (started > 0) {
    const Component& c = components_[--started];
    BASALT_VLOG(1, "Stopping component", "component", c.name);
    if (c.stop) c.stop();
  }
  stop_servers();
  BASALT_LOG_INFO("Shut down", "component", component_);

  std::lock_guard<std::mutex> l(mu_);
  return first_error_;
}

int Runner::metrics_port() const {
  return metrics_server_ != nullptr ? metrics_server_->port() : 0;
}

int Runner::health_port() const {
  if (health_server_ != nullptr) return health_server_->port();
  if (!options_.health_addr.empty()) return metrics_port();
  return 0;
}

void Runner::WaitUntilStarted() const {
  std::unique_lock<std::mutex> l(mu_);
  cond_.wait(l, [this] { return started_; });
}

int ExitCode(const absl::Status& run_result) {
  if (!run_result.ok()) {
    BASALT_LOG_ERROR("Exiting", "error", MessageOf(run_result));
    return 1;
  }
  BASALT_LOG_INFO("Stopped");
  return 0;
}

}  // namespace basalt::runtime
