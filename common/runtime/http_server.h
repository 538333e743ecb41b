#pragma once
// HttpServer serves HTTP/1.1 (keep-alive, one request at a time per connection) from an
// HttpRouter. It carries Basalt's health and metrics endpoints and, with a TLS context
// provider, the admission webhook's HTTPS.
//
// Limits: request bodies over `max_body_bytes` get 413, unparsable requests get 400, and
// the TLS handshake, reading one request (from its first byte, or from the connection's
// start for the first request) and writing its response may take at most
// `request_timeout`; slower clients are disconnected. Between requests a kept-alive
// connection may stay idle for `idle_timeout`, typically much longer: a client that reuses
// its pooled connections (Go's http.Transport keeps them 90 s) must be the side that closes
// them, or a request sent just as the server closes fails with a reset. At most
// `max_connections` connections are open at once: when the limit is reached the server
// stops accepting until one closes, so further clients wait in the listen backlog (the
// behaviour of Go's netutil.LimitListener).
//
// Stop() is graceful: it stops accepting, closes idle connections, lets requests in
// progress finish (their responses carry "Connection: close") for up to `shutdown_grace`,
// then closes whatever is left.
//
// Handlers run on the I/O threads: a handler that blocks holds a thread, and with
// `threads` = 1 nothing else (including Stop's closing of idle connections) makes progress
// until it returns. Give servers with slow handlers more threads.
//
// Thread-safety: Start/Stop/port may be called from any thread but not from a handler.
// A stopped server cannot be started again.
// Ownership: the server owns its router, sockets and I/O threads. The header includes no
// Boost: TLS contexts are only forward-declared here.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/runtime/http.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace basalt::runtime {

// Returns the TLS context for one new connection, or nullptr to refuse it. Called once per
// accepted connection, so rotating certificates means returning a new context; sessions
// keep the context they started with alive (see tls.h for ready-made providers).
using TlsContextProvider = std::function<std::shared_ptr<boost::asio::ssl::context>()>;

struct HttpServerOptions {
  // "host:port". An empty host (":8080") listens on all IPv4 interfaces, "[::]:8080" on
  // all IPv6 ones; port 0 picks a free port (see HttpServer::port()).
  std::string address = ":8080";
  std::size_t max_body_bytes = 1 << 20;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};
  // How long a kept-alive connection may wait for the first byte of its next request.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(120)};
  int max_connections = 64;
  // I/O threads; handlers run on them.
  int threads = 1;
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(5)};
  // Empty: plain HTTP. Set: HTTPS with the provided contexts.
  TlsContextProvider tls;
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  // Stops the server if it still runs.
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Handlers may be added before or after Start().
  HttpRouter& router();
  void Handle(std::string_view method, std::string_view path, HttpHandler handler) {
    router().Handle(method, path, std::move(handler));
  }

  // Binds, listens and starts the I/O threads. Returns kInvalidArgument for a malformed
  // address, kUnavailable if it cannot be bound, kFailedPrecondition if already started.
  absl::Status Start();

  // Graceful stop (see the file comment); blocks until the I/O threads have exited.
  // Idempotent.
  void Stop();

  // The bound port (useful with port 0); 0 before Start().
  int port() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace basalt::runtime
