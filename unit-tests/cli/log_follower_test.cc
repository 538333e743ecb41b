#include "cli/log_follower.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <sstream>

#include "catch2/catch.hpp"
#include "common/client/testing/fake_transport.h"
#include "unit-tests/cli/builders.h"

namespace basalt::cli {
namespace {

using client::FakeTransport;
using testing::ListJson;
using testing::PodBuilder;
using namespace std::chrono_literals;

constexpr char kPodsOfTask0[] =
    "/api/v1/namespaces/default/pods?labelSelector=volcano.sh%2Fjob-name%3Dtrain%2Cvolcano.sh%"
    "2Ftask-spec%3Dworker%2Cvolcano.sh%2Ftask-index%3D0";

struct Fixture {
  Fixture() {
    auto t = std::make_unique<FakeTransport>();
    transport = t.get();
    // Later polls (no script left) fail like an unreachable server: the follower carries on.
    transport->SetFallback([](const client::Request&) -> absl::StatusOr<client::Response> {
      return absl::UnavailableError("connection refused");
    });
    client = std::make_unique<client::Client>(std::move(t), "default");
  }
  FakeTransport* transport;
  std::unique_ptr<client::Client> client;
  std::ostringstream out, err;
  Printer printer{out, err};
};

TEST_CASE("LogFollower: streams the log of the task's first pod once it runs", "[cli][logs]") {
  Fixture f;
  // First poll: the pod is not bound yet; second: it runs.
  f.transport->AddJson("GET", kPodsOfTask0, 200,
                       ListJson("Pod", {PodBuilder("train-worker-0").Phase("Pending").Json()}));
  f.transport->AddJson(
      "GET", kPodsOfTask0, 200,
      ListJson("Pod",
               {PodBuilder("train-worker-0").Node("n1").Phase("Running").Running(true).Json()}));
  FakeTransport::StreamScript log;
  log.chunks = {"epoch 1 loss 0.9\nepoch 2", " loss 0.5\n"};
  f.transport->AddStream("/api/v1/namespaces/default/pods/train-worker-0/log?follow=true", log);

  LogFollower follower(*f.client, "default", "train", "worker", f.printer, 1ms);
  REQUIRE(f.printer.WaitUntil([&] { return f.out.str() == "epoch 1 loss 0.9\nepoch 2 loss 0.5\n"; },
                              10s));
  follower.Stop();
  CHECK(f.err.str() == "vcctl: following the logs of pod default/train-worker-0 (task worker)\n");
  CHECK(f.out.str() == "epoch 1 loss 0.9\nepoch 2 loss 0.5\n");
}

TEST_CASE("LogFollower: a node without logs is reported once, the pod is not retried",
          "[cli][logs]") {
  Fixture f;
  const std::string running = ListJson(
      "Pod", {PodBuilder("train-worker-0").Node("kwok-1").Phase("Running").Running(true).Json()});
  f.transport->AddJson("GET", kPodsOfTask0, 200, running);
  f.transport->AddJson("GET", kPodsOfTask0, 200, running);
  FakeTransport::StreamScript no_logs;
  no_logs.status_code = 404;
  no_logs.body =
      R"j({"kind":"Status","status":"Failure","reason":"NotFound","message":"the server could not find the requested resource ( pods/log train-worker-0)","code":404})j";
  f.transport->AddStream("/api/v1/namespaces/default/pods/train-worker-0/log?follow=true", no_logs);

  LogFollower follower(*f.client, "default", "train", "worker", f.printer, 1ms);
  // Both pod lists are read: the second poll sees the same pod and does not stream it again.
  REQUIRE(
      f.printer.WaitUntil([&] { return f.err.str().find("no logs") != std::string::npos; }, 10s));
  follower.Stop();
  CHECK(f.err.str() ==
        "vcctl: following the logs of pod default/train-worker-0 (task worker)\n"
        "vcctl: no logs for pod default/train-worker-0 (its node serves none): Error from server "
        "(NotFound): the server could not find the requested resource ( pods/log "
        "train-worker-0)\n");
  CHECK(f.out.str().empty());
  int log_requests = 0;
  for (const client::Request& r : f.transport->requests()) {
    if (r.path.find("/log?") != std::string::npos) ++log_requests;
  }
  CHECK(log_requests == 1);
}

TEST_CASE("LogFollower: Stop ends a log stream that is still open", "[cli][logs]") {
  Fixture f;
  f.transport->AddJson(
      "GET", kPodsOfTask0, 200,
      ListJson("Pod",
               {PodBuilder("train-worker-0").Node("n1").Phase("Running").Running(true).Json()}));
  FakeTransport::StreamScript open;
  open.chunks = {"started\n"};
  open.hold_until_cancelled = true;
  f.transport->AddStream("/api/v1/namespaces/default/pods/train-worker-0/log?follow=true", open);
  LogFollower follower(*f.client, "default", "train", "worker", f.printer, 1ms);
  f.transport->WaitForHeldStream();
  follower.Stop();  // returns: the stream was cancelled
  CHECK(f.out.str() == "started\n");
}

}  // namespace
}  // namespace basalt::cli
