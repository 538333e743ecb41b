#pragma once
// Runner is the skeleton of every long-running Basalt process (scheduler, controller
// manager, webhook): it applies the runtime flags (verbosity), serves /metrics and the
// health endpoints, runs the process's components, and shuts them down in order on SIGTERM
// or SIGINT.
//
//   int main(int argc, char** argv) {
//     std::vector<std::string> args(argv + 1, argv + argc);
//     auto options = basalt::runtime::ParseRuntimeFlags(args);
//     ...  // parse the remaining args; handle options->print_version
//     basalt::runtime::Runner runner("vc-controller-manager", *options);
//     runner.AddRunnable("job-controller", [&](std::stop_token stop) { ... });
//     runner.health().AddReadyzCheck("informers", [&] { ... });
//     absl::Status s = runner.Run();
//     return s.ok() ? 0 : 1;
//   }
//
// Shutdown order, once a signal arrives, RequestStop() is called or a runnable fails:
//   1. /readyz starts failing ("shutting-down"), so no new traffic is routed here;
//   2. components stop in reverse order of registration (runnables: their stop_token is
//      signalled and their thread joined; others: their stop function is called);
//   3. the metrics and health servers stop last, so probes and the final scrape still
//      work while components drain.
//
// Thread-safety: Add* and the accessors before Run(); RequestStop() from anywhere.
// Ownership: the Runner owns its servers, health checks, metrics registry and runnable
// threads; components must outlive Run().

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "common/runtime/flags.h"
#include "common/runtime/health.h"
#include "common/runtime/http_server.h"
#include "prometheus/registry.h"

namespace basalt::runtime {

struct RunnerOptions {
  // Install SIGTERM/SIGINT handling in Run() (off for tests that drive RequestStop()).
  bool handle_signals = true;
  // Port 0 in tests; the servers' other settings.
  int http_threads = 1;
};

class Runner {
 public:
  // Applies `options.verbosity` to basalt::log right away.
  Runner(std::string component, RuntimeOptions options, RunnerOptions runner_options = {});
  ~Runner();

  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  HealthChecks& health() { return health_; }
  // The registry /metrics serves; components register their metrics on it.
  const std::shared_ptr<prometheus::Registry>& metrics_registry() const { return registry_; }

  // A component with explicit start and stop: `start` runs during Run() in registration
  // order (an error aborts start-up: components already started are stopped); `stop` runs
  // during shutdown in reverse order. `stop` may be empty.
  void AddComponent(std::string name, std::function<absl::Status()> start,
                    std::function<void()> stop);

  // A component that runs until asked to stop: `run` gets its own thread and a stop_token
  // that is signalled at shutdown. If `run` returns before that, the whole process shuts
  // down and Run() returns its status (or kAborted if it returned OK): a controller that
  // quits must not leave a zombie process that still looks alive.
  void AddRunnable(std::string name, std::function<absl::Status(std::stop_token)> run);

  // Starts servers and components and blocks until shutdown (see the file comment).
  // Returns the first error: a server that cannot bind, a component that fails to start,
  // a runnable that fails. Call once.
  absl::Status Run();

  // Begins shutdown. Thread-safe, idempotent, never blocks.
  void RequestStop();
  // Signalled when shutdown begins.
  std::stop_token stop_token() const { return stop_source_.get_token(); }

  // Bound ports after Run() has started the servers (0 if disabled or not yet started).
  // With both addresses equal, both ports are the same server's.
  int metrics_port() const;
  int health_port() const;
  // Blocks until Run() has started everything (or failed to). For tests.
  void WaitUntilStarted() const;

 private:
  struct Component {
    std::string name;
    std::function<absl::Status()> start;
    std::function<void()> stop;
  };
  absl::Status StartServers();
  void Fail(absl::Status status);

  const std::string component_;
  const RuntimeOptions options_;
  const RunnerOptions runner_options_;
  HealthChecks health_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<Component> components_;
  std::unique_ptr<HttpServer> metrics_server_;
  std::unique_ptr<HttpServer> health_server_;  // Null when it shares metrics_server_.
  std::stop_source stop_source_;

  mutable std::mutex mu_;
  mutable std::condition_variable cond_;  // stop_requested_ or started_ changed.
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

// For main(): the exit code for what Runner::Run returned (0, or 1 after logging the error).
int ExitCode(const absl::Status& run_result);

}  // namespace basalt::runtime
