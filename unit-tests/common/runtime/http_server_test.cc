#include "common/runtime/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/runtime/health.h"
#include "common/runtime/metrics.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "unit-tests/common/runtime/http_test_client.h"

namespace basalt::runtime {
namespace {

using testing::Close;
using testing::Connect;
using testing::Fetch;
using testing::ReadResponse;
using testing::SendAll;

HttpServerOptions LoopbackOptions() {
  HttpServerOptions options;
  options.address = "127.0.0.1:0";
  options.request_timeout = std::chrono::seconds(5);
  options.shutdown_grace = std::chrono::seconds(5);
  return options;
}

// A server with health checks and metrics, as the Runner wires them.
struct ObservabilityServer {
  ObservabilityServer()
      : server(LoopbackOptions()), registry(std::make_shared<prometheus::Registry>()) {
    health.RegisterOn(server.router());
    RegisterMetrics(server.router(), {registry});
    REQUIRE(server.Start().ok());
  }
  HealthChecks health;
  HttpServer server;
  std::shared_ptr<prometheus::Registry> registry;
};

TEST_CASE("HttpServer: /healthz and /readyz answer ok when all checks pass", "[http]") {
  ObservabilityServer s;
  auto healthz = Fetch(s.server.port(), "GET", "/healthz");
  CHECK(healthz.status == 200);
  CHECK(healthz.body == "ok");
  auto readyz = Fetch(s.server.port(), "GET", "/readyz?verbose");
  CHECK(readyz.status == 200);
  CHECK(readyz.body == "[+]ping ok\nreadyz check passed\n");
}

TEST_CASE("HttpServer: /readyz fails with the failing check's reason", "[http]") {
  ObservabilityServer s;
  s.health.AddReadyzCheck("informers", [] { return absl::UnavailableError("pods not synced"); });
  auto readyz = Fetch(s.server.port(), "GET", "/readyz");
  CHECK(readyz.status == 503);
  CHECK(readyz.body == "[+]ping ok\n[-]informers failed: pods not synced\nreadyz check failed\n");
  // Liveness is unaffected by readiness.
  CHECK(Fetch(s.server.port(), "GET", "/healthz").status == 200);
  s.health.SetShuttingDown();
  CHECK(Fetch(s.server.port(), "GET", "/readyz").body.find("[-]shutdown failed: shutting-down") !=
        std::string::npos);
}

TEST_CASE("HttpServer: /metrics exposes registered counters in the text format", "[http]") {
  ObservabilityServer s;
  auto& counter = prometheus::BuildCounter()
                      .Name("basalt_test_syncs_total")
                      .Help("Syncs.")
                      .Register(*s.registry)
                      .Add({{"controller", "job"}});
  counter.Increment(3);
  auto metrics = Fetch(s.server.port(), "GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.head.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(metrics.body.find("# TYPE basalt_test_syncs_total counter") != std::string::npos);
  CHECK(metrics.body.find("basalt_test_syncs_total{controller=\"job\"} 3") != std::string::npos);
}

TEST_CASE("HttpServer: unknown paths get 404, other methods 405 with Allow", "[http]") {
  ObservabilityServer s;
  CHECK(Fetch(s.server.port(), "GET", "/nope").status == 404);
  auto post = Fetch(s.server.port(), "POST", "/healthz", "x");
  CHECK(post.status == 405);
  CHECK(post.head.find("Allow: GET") != std::string::npos);
}

TEST_CASE("HttpServer: handlers get method, path, query, headers and body", "[http]") {
  HttpServer server(LoopbackOptions());
  HttpRequest seen;
  server.Handle("POST", "/validate", [&](const HttpRequest& r) {
    seen = r;
    return HttpResponse::Json(200, "{\"allowed\":true}");
  });
  REQUIRE(server.Start().ok());
  auto response = Fetch(server.port(), "POST", "/validate?timeout=10s", "{\"kind\":\"Job\"}");
  CHECK(response.status == 200);
  CHECK(response.body == "{\"allowed\":true}");
  CHECK(response.head.find("Content-Type: application/json") != std::string::npos);
  CHECK(seen.method == "POST");
  CHECK(seen.path == "/validate");
  CHECK(seen.query == "timeout=10s");
  CHECK(seen.HasQueryParameter("timeout"));
  CHECK(seen.Header("host") == "test");
  CHECK(seen.body == "{\"kind\":\"Job\"}");
}

TEST_CASE("HttpServer: a throwing handler gives 500 and the server keeps serving", "[http]") {
  HttpServer server(LoopbackOptions());
  server.Handle("GET", "/boom",
                [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
  server.Handle("GET", "/ok", [](const HttpRequest&) { return HttpResponse::Text(200, "fine"); });
  REQUIRE(server.Start().ok());
  CHECK(Fetch(server.port(), "GET", "/boom").status == 500);
  CHECK(Fetch(server.port(), "GET", "/ok").body == "fine");
}

TEST_CASE("HttpServer: bodies over the limit get 413", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.max_body_bytes = 16;
  HttpServer server(options);
  std::atomic<int> calls{0};
  server.Handle("POST", "/x", [&](const HttpRequest&) {
    ++calls;
    return HttpResponse::Text(200, "");
  });
  REQUIRE(server.Start().ok());

  SECTION("announced by Content-Length, body never sent") {
    const int fd = Connect(server.port());
    SendAll(fd, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n");
    CHECK(ReadResponse(fd).status == 413);
    Close(fd);
  }
  SECTION("body sent in full") {
    CHECK(Fetch(server.port(), "POST", "/x", std::string(64, 'a')).status == 413);
  }
  SECTION("chunked body growing past the limit") {
    const int fd = Connect(server.port());
    SendAll(fd,
            "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
            "a\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n");
    CHECK(ReadResponse(fd).status == 413);
    Close(fd);
  }
  CHECK(Fetch(server.port(), "POST", "/x", std::string(16, 'a')).status == 200);
  CHECK(calls == 1);
}

TEST_CASE("HttpServer: Expect: 100-continue gets an interim response before the body", "[http]") {
  HttpServer server(LoopbackOptions());
  server.Handle("POST", "/echo",
                [](const HttpRequest& r) { return HttpResponse::Text(200, r.body); });
  REQUIRE(server.Start().ok());
  const int fd = Connect(server.port());
  SendAll(fd,
          "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  auto interim = ReadResponse(fd);
  CHECK(interim.status == 100);
  SendAll(fd, "hello");
  auto response = ReadResponse(fd);
  CHECK(response.status == 200);
  CHECK(response.body == "hello");
  Close(fd);
}

TEST_CASE("HttpServer: malformed requests get 400", "[http]") {
  HttpServer server(LoopbackOptions());
  REQUIRE(server.Start().ok());
  for (std::string_view garbage :
       {"GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n"}) {
    INFO(garbage);
    const int fd = Connect(server.port());
    SendAll(fd, garbage);
    CHECK(ReadResponse(fd).status == 400);
    Close(fd);
  }
}

TEST_CASE("HttpServer: keep-alive connections serve several requests", "[http]") {
  ObservabilityServer s;
  const int fd = Connect(s.server.port());
  for (int i = 0; i < 3; ++i) {
    SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    auto response = ReadResponse(fd);
    CHECK(response.status == 200);
    CHECK(response.body == "ok");
  }
  Close(fd);
}

TEST_CASE("HttpServer: concurrent clients are all served", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.threads = 2;
  HttpServer server(options);
  std::atomic<int> handled{0};
  server.Handle("GET", "/n", [&](const HttpRequest&) {
    ++handled;
    return HttpResponse::Text(200, "n");
  });
  REQUIRE(server.Start().ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (Fetch(server.port(), "GET", "/n").status == 200) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(ok == 200);
  CHECK(handled == 200);
}

TEST_CASE("HttpServer: beyond max_connections, new clients wait until one closes", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.max_connections = 1;
  HttpServer server(options);
  server.Handle("GET", "/x", [](const HttpRequest&) { return HttpResponse::Text(200, "x"); });
  REQUIRE(server.Start().ok());

  const int first = Connect(server.port());
  SendAll(first, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
  REQUIRE(ReadResponse(first).status == 200);  // Kept alive: holds the only slot.

  const int second = Connect(server.port());  // Completes in the kernel's backlog.
  SendAll(second, "GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  CHECK_FALSE(testing::Readable(second, 200));  // Not served while the first is open.
  Close(first);
  CHECK(ReadResponse(second).status == 200);
  Close(second);
}

TEST_CASE("HttpServer: clients slower than the request timeout are disconnected", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.request_timeout = std::chrono::milliseconds(100);
  HttpServer server(options);
  REQUIRE(server.Start().ok());
  const int fd = Connect(server.port());
  SendAll(fd, "GET /x HTTP/1.1\r\n");  // ... and never the rest.
  const auto start = std::chrono::steady_clock::now();
  CHECK(testing::WaitForClose(fd));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  Close(fd);
}

// The API server keeps webhook connections for 90 s and reuses them: a server that closes them
// sooner (at the request timeout) races that reuse, and the request fails with a reset.
TEST_CASE("HttpServer: kept-alive connections wait idle_timeout, not request_timeout", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.request_timeout = std::chrono::milliseconds(100);
  options.idle_timeout = std::chrono::milliseconds(1500);
  HttpServer server(options);
  server.Handle("GET", "/x", [](const HttpRequest&) { return HttpResponse::Text(200, "x"); });
  REQUIRE(server.Start().ok());
  const int fd = Connect(server.port());
  SendAll(fd, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
  REQUIRE(ReadResponse(fd).status == 200);
  auto idle_since = std::chrono::steady_clock::now();

  // Idle for 5 request timeouts: still open, and the next request is served on it.
  CHECK_FALSE(testing::Readable(fd, 500));
  SendAll(fd, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
  auto second = ReadResponse(fd);
  CHECK(second.status == 200);
  CHECK(second.body == "x");
  idle_since = std::chrono::steady_clock::now();

  // Idle past idle_timeout: the server closes it.
  CHECK(testing::WaitForClose(fd));
  const auto idle = std::chrono::steady_clock::now() - idle_since;
  CHECK(idle >= std::chrono::milliseconds(1400));
  CHECK(idle < std::chrono::seconds(4));
  Close(fd);
}

TEST_CASE("HttpServer: a request that starts after an idle wait still has request_timeout",
          "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.request_timeout = std::chrono::milliseconds(200);
  options.idle_timeout = std::chrono::seconds(30);
  HttpServer server(options);
  server.Handle("GET", "/x", [](const HttpRequest&) { return HttpResponse::Text(200, "x"); });
  REQUIRE(server.Start().ok());
  const int fd = Connect(server.port());
  SendAll(fd, "GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
  REQUIRE(ReadResponse(fd).status == 200);
  SendAll(fd, "GET /x HTTP/1.1\r\n");  // ... and never the rest.
  const auto start = std::chrono::steady_clock::now();
  CHECK(testing::WaitForClose(fd));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  Close(fd);
}

TEST_CASE("HttpServer: pipelined requests are all served", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  HttpServer server(options);
  server.Handle("GET", "/x", [](const HttpRequest& r) { return HttpResponse::Text(200, r.query); });
  REQUIRE(server.Start().ok());
  const int fd = Connect(server.port());
  // Both in one write: the second is already buffered when the first is answered.
  SendAll(fd, "GET /x?1 HTTP/1.1\r\nHost: t\r\n\r\nGET /x?2 HTTP/1.1\r\nHost: t\r\n\r\n");
  // Both answers may arrive in one read: collect until both bodies are in (or 5 s pass).
  std::string raw;
  char buf[4096];
  while (raw.find("\r\n\r\n2") == std::string::npos && testing::Readable(fd, 5000)) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  CHECK(raw.find("\r\n\r\n1HTTP/1.1 200") != std::string::npos);
  CHECK(raw.find("\r\n\r\n2") != std::string::npos);
  Close(fd);
}

TEST_CASE("HttpServer: Stop finishes requests in progress and closes idle connections", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.threads = 2;  // One is held by the slow handler.
  HttpServer server(options);
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool release = false;
  server.Handle("GET", "/slow", [&](const HttpRequest&) {
    std::unique_lock<std::mutex> l(mu);
    entered = true;
    cv.notify_all();
    cv.wait(l, [&] { return release; });
    return HttpResponse::Text(200, "done");
  });
  server.Handle("GET", "/fast", [](const HttpRequest&) { return HttpResponse::Text(200, ""); });
  REQUIRE(server.Start().ok());
  const int port = server.port();

  const int idle = Connect(port);
  SendAll(idle, "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n");
  REQUIRE(ReadResponse(idle).status == 200);  // Now idle in keep-alive.

  const int busy = Connect(port);
  SendAll(busy, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return entered; });
  }
  std::thread stopper([&] { server.Stop(); });
  CHECK(testing::WaitForClose(idle));  // Idle connection closed by Stop.
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
    cv.notify_all();
  }
  auto response = ReadResponse(busy);
  CHECK(response.status == 200);
  CHECK(response.body == "done");
  CHECK(response.head.find("Connection: close") != std::string::npos);
  stopper.join();
  Close(idle);
  Close(busy);
  // Nothing listens any more.
  CHECK_FALSE(testing::CanConnect(port));
}

TEST_CASE("HttpServer: Start reports bad and busy addresses", "[http]") {
  HttpServerOptions options = LoopbackOptions();
  options.address = "no-port";
  CHECK(HttpServer(options).Start().code() == absl::StatusCode::kInvalidArgument);
  options.address = "127.0.0.1:99999";
  CHECK(HttpServer(options).Start().code() == absl::StatusCode::kInvalidArgument);

  HttpServer first(LoopbackOptions());
  REQUIRE(first.Start().ok());
  options.address = "127.0.0.1:" + std::to_string(first.port());
  CHECK(HttpServer(options).Start().code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace basalt::runtime
