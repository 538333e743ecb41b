#include "common/runtime/runner.h"

#include <signal.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/runtime/signals.h"
#include "prometheus/counter.h"
#include "unit-tests/common/runtime/http_test_client.h"

namespace basalt::runtime {
namespace {

// Separate metrics and health servers on free ports. (Equal address strings would share
// one server, so health listens on all interfaces.)
RuntimeOptions LoopbackRuntime() {
  RuntimeOptions options;
  options.metrics_addr = "127.0.0.1:0";
  options.health_addr = ":0";
  return options;
}

// Blocks until `stop` is signalled; records that it ran.
absl::Status WaitForStop(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, stop, [] { return false; });
  return absl::OkStatus();
}

TEST_CASE("Runner: SIGTERM stops components in reverse order, readyz failing meanwhile",
          "[runner][signals]") {
  Runner runner("test-manager", LoopbackRuntime());
  std::mutex mu;
  std::vector<std::string> events;
  int readyz_during_stop = 0;
  std::string readyz_body;
  const auto record = [&](std::string e) {
    std::lock_guard<std::mutex> l(mu);
    events.push_back(std::move(e));
  };
  runner.AddComponent(
      "informers",
      [&] {
        record("start informers");
        return absl::OkStatus();
      },
      [&] { record("stop informers"); });
  runner.AddRunnable("job-controller", [&](std::stop_token stop) {
    record("run job-controller");
    absl::Status s = WaitForStop(stop);
    record("stop job-controller");
    return s;
  });
  runner.AddComponent(
      "probe", [] { return absl::OkStatus(); },
      [&] {
        // Components stop before the servers: probes still get answers, "not ready".
        auto r = testing::Fetch(runner.health_port(), "GET", "/readyz");
        readyz_during_stop = r.status;
        readyz_body = r.body;
      });

  absl::Status result = absl::UnknownError("not run");
  std::thread main([&] { result = runner.Run(); });
  runner.WaitUntilStarted();
  CHECK(testing::Fetch(runner.health_port(), "GET", "/readyz").status == 200);
  CHECK(testing::Fetch(runner.health_port(), "GET", "/healthz").status == 200);
  CHECK(runner.metrics_port() != runner.health_port());
  CHECK(testing::Fetch(runner.metrics_port(), "GET", "/metrics").status == 200);

  REQUIRE(raise(SIGTERM) == 0);
  main.join();
  CHECK(result.ok());
  CHECK(runner.stop_token().stop_requested());
  CHECK(readyz_during_stop == 503);
  CHECK(readyz_body.find("shutting-down") != std::string::npos);
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(events.size() == 4);
  CHECK(events[0] == "start informers");
  // The runnable's thread may log "run" at any time after start.
  CHECK(events[2] == "stop job-controller");
  CHECK(events[3] == "stop informers");
}

TEST_CASE("Runner: SIGINT stops it too, and metrics and health can share one port",
          "[runner][signals]") {
  RuntimeOptions options;
  options.metrics_addr = "127.0.0.1:0";
  options.health_addr = options.metrics_addr;  // Same address string: one server.
  Runner runner("test-scheduler", options);
  prometheus::BuildCounter()
      .Name("basalt_test_cycles_total")
      .Help("Cycles.")
      .Register(*runner.metrics_registry())
      .Add({})
      .Increment();
  absl::Status result = absl::UnknownError("not run");
  std::thread main([&] { result = runner.Run(); });
  runner.WaitUntilStarted();
  CHECK(runner.metrics_port() == runner.health_port());
  CHECK(testing::Fetch(runner.metrics_port(), "GET", "/healthz").status == 200);
  CHECK(testing::Fetch(runner.metrics_port(), "GET", "/metrics")
            .body.find("basalt_test_cycles_total 1") != std::string::npos);
  REQUIRE(raise(SIGINT) == 0);
  main.join();
  CHECK(result.ok());
}

TEST_CASE("Runner: a runnable that exits on its own shuts the process down with its error",
          "[runner]") {
  RunnerOptions runner_options;
  runner_options.handle_signals = false;
  Runner runner("test", LoopbackRuntime(), runner_options);
  bool other_stopped = false;
  runner.AddRunnable("patient", [&](std::stop_token stop) {
    absl::Status s = WaitForStop(stop);
    other_stopped = true;
    return s;
  });
  runner.AddRunnable("crasher",
                     [](std::stop_token) { return absl::InternalError("lost the lease"); });
  const absl::Status result = runner.Run();
  CHECK(result.code() == absl::StatusCode::kInternal);
  CHECK(std::string(result.message()).find("crasher: lost the lease") != std::string::npos);
  CHECK(other_stopped);
}

TEST_CASE("Runner: a component that fails to start stops those already started", "[runner]") {
  RunnerOptions runner_options;
  runner_options.handle_signals = false;
  Runner runner("test", LoopbackRuntime(), runner_options);
  bool first_stopped = false;
  bool third_started = false;
  runner.AddComponent(
      "first", [] { return absl::OkStatus(); }, [&] { first_stopped = true; });
  runner.AddComponent(
      "second", [] { return absl::UnavailableError("no API server"); }, nullptr);
  runner.AddComponent(
      "third",
      [&] {
        third_started = true;
        return absl::OkStatus();
      },
      nullptr);
  const absl::Status result = runner.Run();
  CHECK(result.code() == absl::StatusCode::kUnavailable);
  CHECK(first_stopped);
  CHECK_FALSE(third_started);
}

TEST_CASE("Runner: RequestStop from another thread stops Run", "[runner]") {
  RunnerOptions runner_options;
  runner_options.handle_signals = false;
  RuntimeOptions options;
  options.metrics_addr = "";
  options.health_addr = "";
  Runner runner("test", options, runner_options);
  runner.AddRunnable("loop", WaitForStop);
  std::thread stopper([&] {
    runner.WaitUntilStarted();
    runner.RequestStop();
  });
  CHECK(runner.Run().ok());
  stopper.join();
  CHECK(runner.metrics_port() == 0);
  CHECK(runner.health_port() == 0);
}

TEST_CASE("Runner: a busy metrics address fails Run", "[runner]") {
  RunnerOptions runner_options;
  runner_options.handle_signals = false;
  HttpServerOptions squatter_options;
  squatter_options.address = "127.0.0.1:0";
  HttpServer squatter(squatter_options);
  REQUIRE(squatter.Start().ok());
  RuntimeOptions options = LoopbackRuntime();
  options.metrics_addr = "127.0.0.1:" + std::to_string(squatter.port());
  Runner runner("test", options, runner_options);
  CHECK(runner.Run().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("SignalWatcher: delivers SIGTERM to the callback, only one may be active", "[signals]") {
  std::mutex mu;
  std::condition_variable cv;
  int got = 0;
  SignalWatcher watcher([&](int signo) {
    std::lock_guard<std::mutex> l(mu);
    got = signo;
    cv.notify_all();
  });
  REQUIRE(watcher.Start().ok());
  SignalWatcher second([](int) {});
  CHECK(second.Start().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(raise(SIGTERM) == 0);
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [&] { return got != 0; });
  CHECK(got == SIGTERM);
}

}  // namespace
}  // namespace basalt::runtime
