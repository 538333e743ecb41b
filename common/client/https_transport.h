#pragma once
// The real Transport: HTTP/1.1 over TLS to the API server (Boost.Beast/Asio, OpenSSL 3), with
// a keep-alive connection pool. Boost stays inside https_transport.cc (Asio/Beast themselves are
// compiled once in basalt_asio).
//
// Concurrency design: every pooled connection owns a private io_context, and the calling
// thread drives it (connect, handshake, write, read are Asio async operations run to
// completion on the caller's thread). This gives blocking callers real timeouts (beast's
// tcp_stream expiry) and cross-thread cancellation of watches (a closure posted to the
// connection's io_context), without an I/O thread pool or hand-offs between threads: each of N
// concurrent callers uses its own connection, so N requests proceed in parallel, and up to
// max_idle_connections stay open for reuse. Watches hold their connection for the life of the
// stream.
//
// Stale connections (the API server restarted or closed idle keep-alive connections): an idle
// connection the server has closed is detected (readable socket) and dropped before use. When a
// pooled connection still fails with end of stream / reset before any response byte, the
// request is re-sent once, on a freshly dialled connection (never another pooled one), if it
// is idempotent or provably never reached the server (writing it failed); and every connection
// that went idle before that failure is closed, since it is probably stale too. A failure where
// the request provably was not sent (refused connect, failed write) carries MarkRequestNotSent,
// so RetryingTransport retries it with backoff whatever the verb.
//
// Thread-safe.

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/client/config.h"
#include "common/client/retry.h"
#include "common/client/transport.h"
#include "common/util/clock.h"

namespace basalt::client {

struct HttpsTransportOptions {
  std::chrono::milliseconds connect_timeout{10000};  // DNS + TCP connect + TLS handshake
  std::chrono::milliseconds request_timeout{60000};  // default for Request::timeout == 0
  int max_idle_connections = 32;
  size_t max_response_bytes = size_t{1} << 30;  // non-watch bodies; LISTs should paginate
};

// The parts of RestConfig::server.
struct ServerAddress {
  std::string host;    // without brackets for IPv6
  std::string port;    // "443" by default
  std::string prefix;  // path prefix without trailing '/', usually empty
};
// Parses "https://host[:port][/prefix]". Plain http:// is kInvalidArgument.
absl::StatusOr<ServerAddress> ParseServer(std::string_view server);

// HTTPS only, no retries or rate limiting (see NewTransport). Fails on unusable TLS material
// (bad PEM) or server URL.
absl::StatusOr<std::unique_ptr<Transport>> NewHttpsTransport(
    const RestConfig& config, const HttpsTransportOptions& options = {},
    Clock* clock = Clock::Real());

// What every component uses: HTTPS + RetryingTransport with config.qps / config.burst.
absl::StatusOr<std::unique_ptr<Transport>> NewTransport(const RestConfig& config,
                                                        const HttpsTransportOptions& options = {},
                                                        const RetryPolicy& retry = {},
                                                        Clock* clock = Clock::Real());

}  // namespace basalt::client
