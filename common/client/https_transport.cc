// The Beast/Asio implementation of HttpsTransport. See https_transport.h for the design.
#include "common/client/https_transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <iterator>
#include <mutex>
#include <vector>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr size_t kStreamBufferBytes = 64 * 1024;
constexpr size_t kMaxErrorBodyBytes = 1 << 20;

// Runs `ioc` until the operation started by `initiate` completes; returns its error code.
template <typename Initiate>
beast::error_code RunOp(asio::io_context& ioc, Initiate&& initiate) {
  beast::error_code result = asio::error::would_block;
  initiate([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

std::string Describe(const beast::error_code& ec) {
  if (ec == beast::error::timeout) return "timed out";
  return ec.message();
}

bool IsStaleConnectionError(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated;
}

// One TLS connection with its own io_context (driven by whichever thread uses it).
struct Connection {
  explicit Connection(ssl::context& ctx) : stream(ioc, ctx) {}
  asio::io_context ioc;
  beast::ssl_stream<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  bool reused = false;
  bool name_mismatch = false;  // set by the verify callback during the handshake
  SteadyTime idle_since{};     // when it went back to the pool
};

// Whether an idle keep-alive connection was closed by the server: nothing may arrive on an idle
// HTTP/1.1 connection but the end of the stream (FIN, RST, TLS close_notify), so a readable or
// hung-up socket is dead. Catches what it can before a request is spent on the connection
// (Go's transport does the same with its idle read loop); races remain, see Do().
bool ClosedWhileIdle(Connection& conn) {
  beast::tcp_stream& tcp = beast::get_lowest_layer(conn.stream);
  if (!tcp.socket().is_open()) return true;
  pollfd pfd{};
  pfd.fd = tcp.socket().native_handle();
  pfd.events = POLLIN;
  return ::poll(&pfd, 1, 0) != 0;
}

// Whether a failed attempt met a stale pooled connection: the server had closed it (e.g. it
// restarted), so it failed with end of stream / reset before any response byte.
bool IsStaleFailure(const Connection& conn, const beast::error_code& ec, bool got_response_bytes) {
  return conn.reused && IsStaleConnectionError(ec) && !got_response_bytes;
}

// Whether a request that met a stale connection may be sent again on a fresh one: when it
// never reached the server (writing it failed: the server cannot act on a request it did not
// get whole), or when it is idempotent (if the write went out, the server may have acted on it
// before the connection broke).
bool MayResend(bool request_written, bool idempotent) { return !request_written || idempotent; }

std::string DescribeCredentials(const RestConfig& config) {
  std::string what;
  if (!config.bearer_token_file.empty()) {
    what = "bearer token from file " + config.bearer_token_file;
  } else if (!config.bearer_token.empty()) {
    what = "bearer token";
  }
  if (!config.client_cert_pem.empty()) {
    what += what.empty() ? "client certificate" : " and client certificate";
  }
  if (what.empty()) what = "no credentials";
  if (!config.source.empty()) what += fmt::format(" ({})", config.source);
  return what;
}

class HttpsTransport final : public Transport {
 public:
  HttpsTransport(const RestConfig& config, ServerAddress address, std::shared_ptr<ssl::context> ctx,
                 const HttpsTransportOptions& options, Clock* clock)
      : address_(std::move(address)),
        ctx_(std::move(ctx)),
        options_(options),
        insecure_(config.insecure_skip_tls_verify),
        verify_name_(config.tls_server_name.empty() ? address_.host : config.tls_server_name),
        user_agent_(config.user_agent),
        token_(config.bearer_token, config.bearer_token_file, clock),
        credentials_(DescribeCredentials(config)) {
    bool ipv6 = address_.host.find(':') != std::string::npos;
    host_header_ = fmt::format("{}{}{}", ipv6 ? "[" : "", address_.host, ipv6 ? "]" : "");
    if (address_.port != "443") host_header_ += ":" + address_.port;
    endpoint_name_ = host_header_ + (address_.port == "443" ? ":443" : "");
  }

  std::string CredentialsDescription() const override { return credentials_; }

  absl::StatusOr<Response> Do(const Request& request) override {
    SteadyTime deadline =
        std::chrono::steady_clock::now() +
        (request.timeout.count() > 0 ? request.timeout : options_.request_timeout);
    BASALT_ASSIGN_OR_RETURN(http::request<http::string_body> req, BuildRequest(request));
    const bool idempotent = IsIdempotentVerb(request.verb);
    // Attempt 0 may use a pooled connection; attempt 1 (after a stale one) only a fresh one.
    for (int attempt = 0;; ++attempt) {
      BASALT_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                              Acquire(deadline, /*fresh=*/attempt > 0));
      beast::tcp_stream& tcp = beast::get_lowest_layer(conn->stream);
      tcp.expires_at(deadline);
      beast::error_code ec = RunOp(conn->ioc, [&](auto handler) {
        http::async_write(conn->stream, req, std::move(handler));
      });
      if (ec) {
        if (IsStaleFailure(*conn, ec, false)) {
          OnStaleConnection(request, "sending request", ec);
          if (MayResend(/*request_written=*/false, idempotent)) continue;
        }
        return Failure(request, "sending request", ec, deadline, /*sent=*/false);
      }
      http::response_parser<http::string_body> parser;
      parser.body_limit(options_.max_response_bytes);
      parser.header_limit(64 * 1024);
      ec = RunOp(conn->ioc, [&](auto handler) {
        http::async_read(conn->stream, conn->buffer, parser, std::move(handler));
      });
      if (ec) {
        if (IsStaleFailure(*conn, ec, parser.got_some())) {
          OnStaleConnection(request, "reading response", ec);
          if (MayResend(/*request_written=*/true, idempotent)) continue;
        }
        return Failure(request, "reading response", ec, deadline, /*sent=*/true);
      }
      http::response<http::string_body> msg = parser.release();
      Response response;
      response.status_code = static_cast<int>(msg.result_int());
      CopyHeaders(msg, response.headers);
      response.body = std::move(msg.body());
      if (msg.keep_alive()) Release(std::move(conn));
      return response;
    }
  }

  absl::StatusOr<Response> Stream(const Request& request, const LineCallback& on_line,
                                  CancelToken* cancel) override {
    SteadyTime deadline =
        std::chrono::steady_clock::now() +
        (request.timeout.count() > 0 ? request.timeout : options_.request_timeout);
    BASALT_ASSIGN_OR_RETURN(http::request<http::string_body> req, BuildRequest(request));
    std::unique_ptr<Connection> conn;
    std::unique_ptr<http::response_parser<http::buffer_body>> parser;
    const bool idempotent = IsIdempotentVerb(request.verb);
    for (int attempt = 0;; ++attempt) {
      BASALT_ASSIGN_OR_RETURN(conn, Acquire(deadline, /*fresh=*/attempt > 0));
      beast::get_lowest_layer(conn->stream).expires_at(deadline);
      beast::error_code ec = RunOp(conn->ioc, [&](auto handler) {
        http::async_write(conn->stream, req, std::move(handler));
      });
      if (ec) {
        if (IsStaleFailure(*conn, ec, false)) {
          OnStaleConnection(request, "sending request", ec);
          if (MayResend(/*request_written=*/false, idempotent)) continue;
        }
        return Failure(request, "sending request", ec, deadline, /*sent=*/false);
      }
      parser = std::make_unique<http::response_parser<http::buffer_body>>();
      parser->body_limit(boost::none);  // a watch body never ends by size
      parser->header_limit(64 * 1024);
      ec = RunOp(conn->ioc, [&](auto handler) {
        http::async_read_header(conn->stream, conn->buffer, *parser, std::move(handler));
      });
      if (ec) {
        if (IsStaleFailure(*conn, ec, parser->got_some())) {
          OnStaleConnection(request, "reading response headers", ec);
          if (MayResend(/*request_written=*/true, idempotent)) continue;
        }
        return Failure(request, "reading response headers", ec, deadline, /*sent=*/true);
      }
      break;
    }

    Response response;
    response.status_code = static_cast<int>(parser->get().result_int());
    CopyHeaders(parser->get(), response.headers);
    bool success = response.status_code >= 200 && response.status_code < 300;

    Connection* raw = conn.get();
    if (success && cancel != nullptr) {
      cancel->SetCanceller(
          [raw] { asio::post(raw->ioc, [raw] { beast::get_lowest_layer(raw->stream).close(); }); });
    }
    std::vector<char> buf(kStreamBufferBytes);
    LineFramer framer;
    absl::Status status;
    bool cancelled = false;
    while (!parser->is_done()) {
      if (cancel != nullptr && cancel->cancelled()) {
        cancelled = true;
        break;
      }
      parser->get().body().data = buf.data();
      parser->get().body().size = buf.size();
      beast::tcp_stream& tcp = beast::get_lowest_layer(conn->stream);
      if (!success) {
        tcp.expires_at(deadline);
      } else if (request.stream_idle_timeout.count() > 0) {
        tcp.expires_after(request.stream_idle_timeout);
      } else {
        tcp.expires_never();
      }
      beast::error_code ec = RunOp(conn->ioc, [&](auto handler) {
        http::async_read_some(conn->stream, conn->buffer, *parser, std::move(handler));
      });
      if (ec == http::error::need_buffer) ec = {};
      size_t n = buf.size() - parser->get().body().size;
      if (n > 0) {
        std::string_view bytes(buf.data(), n);
        if (success) {
          status = framer.Feed(bytes, on_line);
          if (!status.ok()) break;
        } else if (response.body.size() < kMaxErrorBodyBytes) {
          response.body.append(bytes);
        }
      }
      if (ec) {
        if (cancel != nullptr && cancel->cancelled()) {
          cancelled = true;
        } else if (ec == beast::error::timeout && success) {
          status = absl::DeadlineExceededError(
              fmt::format("{} {}: no data from {} for {} ms", request.verb, request.path,
                          endpoint_name_, request.stream_idle_timeout.count()));
        } else {
          status = Failure(request, success ? "reading stream" : "reading response", ec, deadline,
                           /*sent=*/true)
                       .status();
        }
        break;
      }
    }
    if (success && cancel != nullptr) {
      cancel->ClearCanceller();
      // A Cancel() that raced with the end of the body may have queued a close on this
      // connection's io_context: such a connection must not go back to the pool.
      cancelled = cancelled || cancel->cancelled();
    }
    if (!status.ok()) return status;
    if (success && parser->is_done() && !cancelled) {
      BASALT_RETURN_IF_ERROR(framer.Finish(on_line));
      if (parser->get().keep_alive()) Release(std::move(conn));
    }
    return response;
  }

 private:
  template <typename Message>
  static void CopyHeaders(const Message& msg, Headers& out) {
    for (const auto& field : msg) {
      out.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
  }

  absl::StatusOr<http::request<http::string_body>> BuildRequest(const Request& request) {
    http::verb verb =
        http::string_to_verb(beast::string_view(request.verb.data(), request.verb.size()));
    if (verb == http::verb::unknown) {
      return absl::InvalidArgumentError(fmt::format("unknown HTTP verb \"{}\"", request.verb));
    }
    if (request.path.empty() || request.path[0] != '/') {
      return absl::InvalidArgumentError(
          fmt::format("request path \"{}\" must start with '/'", request.path));
    }
    http::request<http::string_body> req(verb, address_.prefix + request.path, 11);
    req.set(http::field::host, host_header_);
    req.set(http::field::user_agent, user_agent_);
    bool has_accept = false;
    bool has_content_type = false;
    for (const auto& [name, value] : request.headers) {
      req.set(beast::string_view(name.data(), name.size()),
              beast::string_view(value.data(), value.size()));
      has_accept |= beast::iequals(name, "accept");
      has_content_type |= beast::iequals(name, "content-type");
    }
    if (!has_accept) req.set(http::field::accept, "application/json");
    if (!request.body.empty() && !has_content_type) {
      req.set(http::field::content_type, "application/json");
    }
    std::string token = token_.Token();
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    req.keep_alive(true);
    req.body() = request.body;
    req.prepare_payload();
    return req;
  }

  // `sent`: the request may have reached the server. When it cannot have (the write failed),
  // the status is marked with MarkRequestNotSent so RetryingTransport may retry any verb.
  absl::StatusOr<Response> Failure(const Request& request, std::string_view stage,
                                   const beast::error_code& ec, SteadyTime deadline,
                                   bool sent) const {
    std::string msg = fmt::format("{} {}: {} {}: {}", request.verb, request.path, stage,
                                  endpoint_name_, Describe(ec));
    absl::Status status =
        ec == beast::error::timeout || std::chrono::steady_clock::now() >= deadline
            ? absl::DeadlineExceededError(msg)
            : absl::UnavailableError(msg);
    return sent ? status : MarkRequestNotSent(std::move(status));
  }

  // A pooled connection turned out stale: the connections that went idle before now are
  // probably stale too (the server restarted or dropped them together), so they are closed
  // rather than tried one by one. The caller re-sends on a freshly dialled connection if it
  // may (MayResend).
  void OnStaleConnection(const Request& request, std::string_view stage,
                         const beast::error_code& ec) {
    const SteadyTime now = std::chrono::steady_clock::now();
    std::vector<std::unique_ptr<Connection>> dropped;
    {
      std::lock_guard<std::mutex> l(mu_);
      auto stale = std::stable_partition(idle_.begin(), idle_.end(),
                                         [now](const auto& c) { return c->idle_since >= now; });
      dropped.assign(std::make_move_iterator(stale), std::make_move_iterator(idle_.end()));
      idle_.erase(stale, idle_.end());
    }
    BASALT_VLOG(2, "Stale pooled connection", "verb", request.verb, "path", request.path, "stage",
                stage, "error", Describe(ec), "idle_connections_closed", dropped.size());
    // `dropped` closes its sockets here, outside the lock.
  }

  // A pooled connection (unless `fresh`) or a new one.
  absl::StatusOr<std::unique_ptr<Connection>> Acquire(SteadyTime request_deadline, bool fresh) {
    while (!fresh) {
      std::unique_ptr<Connection> conn;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (idle_.empty()) break;
        conn = std::move(idle_.back());
        idle_.pop_back();
      }
      if (ClosedWhileIdle(*conn)) continue;  // closed by the server while idle: drop it
      conn->reused = true;
      return conn;
    }
    SteadyTime deadline =
        std::min(request_deadline, std::chrono::steady_clock::now() + options_.connect_timeout);
    auto conn = std::make_unique<Connection>(*ctx_);
    BASALT_RETURN_IF_ERROR(MarkRequestNotSent(Connect(*conn, deadline)));
    return conn;
  }

  void Release(std::unique_ptr<Connection> conn) {
    conn->buffer.clear();
    conn->idle_since = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> l(mu_);
    if (static_cast<int>(idle_.size()) < options_.max_idle_connections) {
      idle_.push_back(std::move(conn));
    }
  }

  absl::Status Connect(Connection& conn, SteadyTime deadline) {
    // Resolve, bounded by the deadline.
    tcp::resolver resolver(conn.ioc);
    asio::steady_timer timer(conn.ioc);
    tcp::resolver::results_type endpoints;
    beast::error_code ec;
    bool resolved = false;
    timer.expires_at(deadline);
    resolver.async_resolve(address_.host, address_.port,
                           [&](beast::error_code e, tcp::resolver::results_type r) {
                             ec = e;
                             endpoints = std::move(r);
                             resolved = true;
                             timer.cancel();
                           });
    timer.async_wait([&](beast::error_code e) {
      if (!e && !resolved) resolver.cancel();
    });
    conn.ioc.restart();
    conn.ioc.run();
    if (ec) {
      return absl::UnavailableError(
          fmt::format("resolving {}: {}", address_.host,
                      ec == asio::error::operation_aborted ? "timed out" : ec.message()));
    }
    beast::tcp_stream& tcp = beast::get_lowest_layer(conn.stream);
    tcp.expires_at(deadline);
    ec = RunOp(conn.ioc, [&](auto handler) { tcp.async_connect(endpoints, std::move(handler)); });
    if (ec) {
      std::string msg = fmt::format("connecting to {}: {}", endpoint_name_, Describe(ec));
      return ec == beast::error::timeout ? absl::DeadlineExceededError(msg)
                                         : absl::UnavailableError(msg);
    }
    tcp.socket().set_option(tcp::no_delay(true), ec);

    // SNI only for DNS names (RFC 6066 forbids IP literals).
    const std::string& sni = verify_name_;
    beast::error_code ip_ec;
    asio::ip::make_address(sni, ip_ec);
    if (ip_ec && !SSL_set_tlsext_host_name(conn.stream.native_handle(), sni.c_str())) {
      return absl::InternalError(fmt::format("setting TLS SNI to {} failed", sni));
    }
    if (!insecure_) {
      // host_name_verification checks only the leaf; remember when the chain was fine but the
      // name was not, to say so in the error.
      conn.stream.set_verify_callback([&conn, check = ssl::host_name_verification(verify_name_)](
                                          bool preverified, ssl::verify_context& ctx) mutable {
        bool ok = check(preverified, ctx);
        if (preverified && !ok) conn.name_mismatch = true;
        return ok;
      });
    }
    ec = RunOp(conn.ioc, [&](auto handler) {
      conn.stream.async_handshake(ssl::stream_base::client, std::move(handler));
    });
    if (ec) {
      std::string detail = Describe(ec);
      long verify = SSL_get_verify_result(conn.stream.native_handle());
      bool verify_failed =
          verify != X509_V_OK || (ec.category() == asio::error::get_ssl_category() &&
                                  ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
                                      SSL_R_CERTIFICATE_VERIFY_FAILED);
      if (conn.name_mismatch) {
        detail += fmt::format(" (the certificate is not valid for \"{}\")", verify_name_);
      } else if (verify != X509_V_OK) {
        detail += fmt::format(" ({})", X509_verify_cert_error_string(verify));
      }
      std::string msg = fmt::format(
          "TLS handshake with {} failed: {}; check the cluster's certificate-authority and that "
          "the server certificate is valid for \"{}\"",
          endpoint_name_, detail, verify_name_);
      // A certificate that does not verify will not verify on retry: kFailedPrecondition is
      // not retried. Other handshake failures (reset, timeout) are transient.
      if (verify_failed) return absl::FailedPreconditionError(msg);
      return ec == beast::error::timeout ? absl::DeadlineExceededError(msg)
                                         : absl::UnavailableError(msg);
    }
    return absl::OkStatus();
  }

  const ServerAddress address_;
  const std::shared_ptr<ssl::context> ctx_;  // outlives every Connection (streams reference it)
  const HttpsTransportOptions options_;
  const bool insecure_;
  const std::string verify_name_;
  const std::string user_agent_;
  std::string host_header_;
  std::string endpoint_name_;
  TokenSource token_;
  const std::string credentials_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
};

absl::StatusOr<std::shared_ptr<ssl::context>> MakeContext(const RestConfig& config) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  if (config.insecure_skip_tls_verify) {
    ctx->set_verify_mode(ssl::verify_none, ec);
  } else {
    ctx->set_verify_mode(ssl::verify_peer, ec);
    if (!config.ca_pem.empty()) {
      ctx->add_certificate_authority(asio::buffer(config.ca_pem), ec);
      if (ec) {
        return absl::InvalidArgumentError(fmt::format(
            "{}: certificate-authority is not valid PEM: {}", config.source, ec.message()));
      }
    } else {
      ctx->set_default_verify_paths(ec);
    }
  }
  if (!config.client_cert_pem.empty()) {
    ctx->use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
    if (ec) {
      return absl::InvalidArgumentError(
          fmt::format("{}: client-certificate is not valid PEM: {}", config.source, ec.message()));
    }
    ctx->use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          fmt::format("{}: client-key is not a valid PEM key for the certificate: {}",
                      config.source, ec.message()));
    }
  }
  return ctx;
}

}  // namespace

absl::StatusOr<ServerAddress> ParseServer(std::string_view server) {
  constexpr std::string_view kHttps = "https://";
  if (server.substr(0, kHttps.size()) != kHttps) {
    return absl::InvalidArgumentError(
        fmt::format("server \"{}\": only https:// URLs are supported", server));
  }
  std::string_view rest = server.substr(kHttps.size());
  size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  ServerAddress out;
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    out.prefix = std::string(prefix);
  }
  std::string_view port;
  if (!hostport.empty() && hostport[0] == '[') {
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(fmt::format("server \"{}\": unterminated '['", server));
    }
    out.host = std::string(hostport.substr(1, close - 1));
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return absl::InvalidArgumentError(fmt::format("server \"{}\": bad port", server));
      }
      port = after.substr(1);
    }
  } else {
    size_t colon = hostport.rfind(':');
    out.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) port = hostport.substr(colon + 1);
  }
  if (out.host.empty()) {
    return absl::InvalidArgumentError(fmt::format("server \"{}\": missing host", server));
  }
  for (char c : port) {
    if (c < '0' || c > '9') {
      return absl::InvalidArgumentError(fmt::format("server \"{}\": bad port", server));
    }
  }
  out.port = port.empty() ? "443" : std::string(port);
  return out;
}

absl::StatusOr<std::unique_ptr<Transport>> NewHttpsTransport(const RestConfig& config,
                                                             const HttpsTransportOptions& options,
                                                             Clock* clock) {
  BASALT_ASSIGN_OR_RETURN(ServerAddress address, ParseServer(config.server));
  BASALT_ASSIGN_OR_RETURN(std::shared_ptr<ssl::context> ctx, MakeContext(config));
  return std::unique_ptr<Transport>(
      new HttpsTransport(config, std::move(address), std::move(ctx), options, clock));
}

absl::StatusOr<std::unique_ptr<Transport>> NewTransport(const RestConfig& config,
                                                        const HttpsTransportOptions& options,
                                                        const RetryPolicy& retry, Clock* clock) {
  BASALT_ASSIGN_OR_RETURN(std::unique_ptr<Transport> https,
                          NewHttpsTransport(config, options, clock));
  return std::unique_ptr<Transport>(
      new RetryingTransport(std::move(https), retry, config.qps, config.burst, clock));
}

}  // namespace basalt::client
