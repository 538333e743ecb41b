// Beast/Asio implementation of HttpServer. One of the few files in common/runtime that
// include Boost (the others: tls.cc); built with separate compilation (basalt_asio).

#include "common/runtime/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::runtime {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// How long a connection we close after an error keeps reading what the client still sends,
// so that the kernel does not answer unread data with a reset that destroys our response.
constexpr std::chrono::seconds kLingerTimeout{1};
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};
// What one read of an idle connection may take in: the start of the next request.
constexpr std::size_t kIdleReadBytes = 4096;

std::string Str(beast::string_view s) { return std::string(s.data(), s.size()); }

absl::StatusOr<tcp::endpoint> ResolveListenAddress(std::string_view address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(fmt::format("address \"{}\" is not host:port", address));
  }
  std::string_view host = address.substr(0, colon);
  const std::string_view port_text = address.substr(colon + 1);
  unsigned port = 0;
  const auto [end, err] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (err != std::errc() || end != port_text.data() + port_text.size() || port > 65535 ||
      port_text.empty()) {
    return absl::InvalidArgumentError(fmt::format("address \"{}\": bad port", address));
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return tcp::endpoint(asio::ip::address_v4::any(), port);
  beast::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(std::string(host), ec);
  if (!ec) return tcp::endpoint(ip, port);
  // A name such as "localhost": resolve it once, synchronously.
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(std::string(host), std::string(port_text), ec);
  if (ec || results.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("address \"{}\": cannot resolve host: {}", address, ec.message()));
  }
  return results.begin()->endpoint();
}

HttpRequest ToRequest(http::request<http::string_body>&& message, std::string remote) {
  HttpRequest request;
  request.method = Str(message.method_string());
  request.target = Str(message.target());
  const std::size_t q = request.target.find('?');
  request.path = request.target.substr(0, q);
  if (q != std::string::npos) request.query = request.target.substr(q + 1);
  for (const auto& field : message) {
    request.headers.emplace_back(Str(field.name_string()), Str(field.value()));
  }
  request.body = std::move(message.body());
  request.remote_address = std::move(remote);
  return request;
}

// Status codes for requests that fail before reaching a handler; 0 means "just close".
int StatusForReadError(const beast::error_code& ec) {
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == http::error::short_read) {
    return 0;
  }
  if (ec.category() == http::make_error_code(http::error::bad_method).category()) return 400;
  return 0;  // Timeouts, resets, cancellation.
}

// Connections are tracked by id so Stop() can reach them; each closes itself and reports
// back from its destructor.
class SessionBase : public std::enable_shared_from_this<SessionBase> {
 public:
  virtual ~SessionBase() = default;
  virtual void Start() = 0;
  // Thread-safe: finishes the request in progress, then closes.
  virtual void Stop() = 0;
};

// What a session needs from its server.
class SessionOwner {
 public:
  virtual const HttpServerOptions& options() const = 0;
  virtual HttpRouter& router() = 0;
  // True once Stop() has begun; thread-safe.
  virtual bool stopping() const = 0;
  virtual void OnSessionClosed(std::uint64_t id) = 0;

 protected:
  ~SessionOwner() = default;
};

}  // namespace

class HttpServer::Impl final : public SessionOwner {
 public:
  explicit Impl(HttpServerOptions options)
      : options_(std::move(options)),
        ioc_(std::max(1, options_.threads)),
        accept_strand_(asio::make_strand(ioc_)),
        acceptor_(accept_strand_),
        accept_retry_timer_(accept_strand_) {}

  ~Impl() { Stop(); }

  HttpRouter& router() override { return router_; }
  const HttpServerOptions& options() const override { return options_; }
  int port() const { return port_.load(); }
  bool stopping() const override { return stopping_flag_.load(); }

  absl::Status Start();
  void Stop();
  void OnSessionClosed(std::uint64_t id) override;

 private:
  void DoAccept();
  void OnAccept(beast::error_code ec, tcp::socket socket);

  const HttpServerOptions options_;
  HttpRouter router_;
  std::atomic<int> port_{0};
  std::atomic<bool> stopping_flag_{false};  // stopping_, readable without mu_.

  // Declared before ioc_: sessions destroyed with the io_context still report here.
  mutable std::mutex mu_;
  std::condition_variable sessions_closed_;  // Notified when sessions_ becomes empty.
  std::unordered_map<std::uint64_t, std::weak_ptr<SessionBase>> sessions_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_session_id_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool accept_paused_ ABSL_GUARDED_BY(mu_) = false;

  asio::io_context ioc_;
  asio::strand<asio::io_context::executor_type> accept_strand_;
  tcp::acceptor acceptor_;  // Used only on accept_strand_.
  asio::steady_timer accept_retry_timer_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_guard_;
  std::vector<std::thread> threads_;
};

namespace {

template <class Stream>
class Session final : public SessionBase {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Session(SessionOwner* server, std::uint64_t id, tcp::socket&& socket,
          std::shared_ptr<asio::ssl::context> tls_context)
      : server_(server),
        id_(id),
        remote_(RemoteOf(socket)),
        tls_context_(std::move(tls_context)),
        stream_(MakeStream(std::move(socket), tls_context_.get())) {}

  ~Session() override { server_->OnSessionClosed(id_); }

  void Start() override {
    asio::dispatch(stream_.get_executor(), [self = Self()] { self->Begin(); });
  }

  void Stop() override {
    asio::post(stream_.get_executor(), [self = Self()] {
      self->stopping_ = true;
      // Idle (or mid-read) connections close now; a request being answered finishes.
      if (self->reading_) beast::get_lowest_layer(self->stream_).cancel();
    });
  }

 private:
  static std::string RemoteOf(const tcp::socket& socket) {
    beast::error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return "unknown";
    return fmt::format("{}:{}", peer.address().to_string(), peer.port());
  }

  static Stream MakeStream(tcp::socket&& socket, asio::ssl::context* tls_context) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls_context);
    } else {
      return Stream(std::move(socket));
    }
  }

  std::shared_ptr<Session> Self() { return std::static_pointer_cast<Session>(shared_from_this()); }

  void ArmTimer() {
    beast::get_lowest_layer(stream_).expires_after(server_->options().request_timeout);
  }

  void Begin() {
    if constexpr (kTls) {
      ArmTimer();
      reading_ = true;
      stream_.async_handshake(asio::ssl::stream_base::server,
                              beast::bind_front_handler(&Session::OnHandshake, Self()));
    } else {
      DoRead();
    }
  }

  void OnHandshake(beast::error_code ec) {
    reading_ = false;
    if (ec) {
      BASALT_VLOG(2, "TLS handshake failed", "remote", remote_, "error", ec.message());
      return CloseNow();
    }
    DoRead();
  }

  void DoRead() {
    if (stopping_) return DoClose(/*linger=*/false);
    if (served_ && buffer_.size() == 0) return WaitForNextRequest();
    ReadHeader();
  }

  // Between requests on a kept-alive connection: waits up to idle_timeout for the first
  // bytes of the next request, then gives the request its own request_timeout.
  void WaitForNextRequest() {
    beast::get_lowest_layer(stream_).expires_after(server_->options().idle_timeout);
    reading_ = true;
    stream_.async_read_some(buffer_.prepare(kIdleReadBytes),
                            beast::bind_front_handler(&Session::OnIdleRead, Self()));
  }

  void OnIdleRead(beast::error_code ec, std::size_t bytes) {
    reading_ = false;
    if (ec) {
      BASALT_VLOG(4, "Idle HTTP connection closed", "remote", remote_, "reason", ec.message());
      return DoClose(/*linger=*/false);
    }
    buffer_.commit(bytes);
    if (stopping_) return DoClose(/*linger=*/false);
    ReadHeader();
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->body_limit(server_->options().max_body_bytes);
    ArmTimer();
    reading_ = true;
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnHeader, Self()));
  }

  // With the header in (and the body limit already checked against Content-Length),
  // answers "Expect: 100-continue" so clients such as curl send the body without waiting.
  void OnHeader(beast::error_code ec, std::size_t) {
    if (ec) return OnRead(ec, 0);
    if (!parser_->is_done() &&
        beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      continue_ =
          http::response<http::empty_body>(http::status::continue_, parser_->get().version());
      http::async_write(stream_, continue_,
                        [self = Self()](beast::error_code write_ec, std::size_t) {
                          if (write_ec) return self->CloseNow();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, Self()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    reading_ = false;
    if (ec) {
      const int status = StatusForReadError(ec);
      if (status == 0) {
        BASALT_VLOG(4, "HTTP connection closed", "remote", remote_, "reason", ec.message());
        return DoClose(/*linger=*/false);
      }
      BASALT_VLOG(2, "Rejecting HTTP request", "remote", remote_, "status", status, "error",
                  ec.message());
      return Write(HttpResponse::Text(status, ec.message() + "\n"), 11, /*keep_alive=*/false,
                   /*linger=*/true);
    }
    const unsigned version = parser_->get().version();
    const bool keep_alive = parser_->get().keep_alive();
    HttpRequest request = ToRequest(parser_->release(), remote_);
    HttpResponse response = server_->router().Route(request);
    BASALT_VLOG(5, "HTTP request", "method", request.method, "path", request.path, "status",
                response.status, "remote", remote_);
    // A stop that began while the handler ran is seen here through the server's flag (our
    // own stopping_ is set by a handler queued behind this one on the strand).
    Write(std::move(response), version, keep_alive && !stopping_ && !server_->stopping(),
          /*linger=*/false);
  }

  void Write(HttpResponse response, unsigned version, bool keep_alive, bool linger) {
    response_ = {};
    response_.result(static_cast<unsigned>(std::clamp(response.status, 100, 599)));
    response_.version(version);
    response_.set(http::field::server, "basalt");
    response_.set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) response_.insert(name, value);
    response_.body() = std::move(response.body);
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    ArmTimer();
    http::async_write(stream_, response_,
                      beast::bind_front_handler(&Session::OnWrite, Self(), keep_alive, linger));
  }

  void OnWrite(bool keep_alive, bool linger, beast::error_code ec, std::size_t) {
    if (ec) return CloseNow();
    if (!keep_alive || stopping_) return DoClose(linger);
    served_ = true;
    DoRead();
  }

  void DoClose(bool linger) {
    if constexpr (kTls) {
      // close_notify, bounded by the timer; the peer may just drop the connection.
      beast::get_lowest_layer(stream_).expires_after(kLingerTimeout);
      stream_.async_shutdown([self = Self()](beast::error_code) { self->CloseNow(); });
    } else {
      beast::error_code ec;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      if (!linger || ec) return CloseNow();
      stream_.expires_after(kLingerTimeout);
      Drain();
    }
  }

  void Drain() {
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = Self()](beast::error_code ec, std::size_t) {
                              if (ec) return self->CloseNow();
                              self->Drain();
                            });
  }

  void CloseNow() { beast::get_lowest_layer(stream_).close(); }

  SessionOwner* const server_;
  const std::uint64_t id_;
  const std::string remote_;
  // Declared before stream_, which keeps a reference to it.
  const std::shared_ptr<asio::ssl::context> tls_context_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  http::response<http::empty_body> continue_;
  std::array<char, 4096> scratch_{};
  // Only touched on the connection's strand.
  bool reading_ = false;
  bool stopping_ = false;
  bool served_ = false;  // A response was written; the next wait is an idle one.
};

}  // namespace

absl::Status HttpServer::Impl::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (started_) return absl::FailedPreconditionError("HTTP server already started");
  BASALT_ASSIGN_OR_RETURN(const tcp::endpoint endpoint, ResolveListenAddress(options_.address));
  beast::error_code ec;
  const auto fail = [&](std::string_view what) {
    beast::error_code ignored;
    acceptor_.close(ignored);
    return absl::UnavailableError(fmt::format("{} {}: {}", what, options_.address, ec.message()));
  };
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) return fail("opening");
  acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (ec) return fail("setting SO_REUSEADDR on");
  acceptor_.bind(endpoint, ec);
  if (ec) return fail("binding");
  acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail("listening on");
  const tcp::endpoint local = acceptor_.local_endpoint(ec);
  if (ec) return fail("reading the local address of");
  port_ = local.port();
  started_ = true;

  work_guard_.emplace(ioc_.get_executor());
  asio::post(accept_strand_, [this] { DoAccept(); });
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        try {
          ioc_.run();
          return;
        } catch (const std::exception& e) {
          BASALT_LOG_ERROR("HTTP server I/O thread caught an exception", "error", e.what());
        }
      }
    });
  }
  BASALT_LOG_INFO("HTTP server listening", "address", options_.address, "port", port_.load(), "tls",
                  static_cast<bool>(options_.tls));
  return absl::OkStatus();
}

void HttpServer::Impl::Stop() {
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
    stopping_flag_ = true;
    for (auto& [id, weak] : sessions_) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
  }
  asio::post(accept_strand_, [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_timer_.cancel();
  });
  for (auto& session : live) session->Stop();
  live.clear();  // Our references must not keep sessions alive.
  {
    std::unique_lock<std::mutex> l(mu_);
    if (!sessions_closed_.wait_for(l, options_.shutdown_grace,
                                   [this] { return sessions_.empty(); })) {
      BASALT_LOG_WARNING("HTTP server grace period over; closing connections", "address",
                         options_.address, "connections", sessions_.size());
    }
  }
  work_guard_.reset();
  ioc_.stop();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
  // The posted close may not have run if the grace period ran out; no thread uses the
  // acceptor any more, so close it here to free the port now.
  beast::error_code ignored;
  acceptor_.close(ignored);
  BASALT_LOG_INFO("HTTP server stopped", "address", options_.address);
}

void HttpServer::Impl::DoAccept() {
  acceptor_.async_accept(asio::make_strand(ioc_), [this](beast::error_code ec, tcp::socket s) {
    OnAccept(ec, std::move(s));
  });
}

void HttpServer::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    // Typically EMFILE: retry shortly instead of spinning on the error.
    BASALT_LOG_WARNING("HTTP accept failed", "address", options_.address, "error", ec.message());
    accept_retry_timer_.expires_after(kAcceptRetryDelay);
    accept_retry_timer_.async_wait([this](beast::error_code timer_ec) {
      if (!timer_ec) DoAccept();
    });
    return;
  }
  std::shared_ptr<asio::ssl::context> tls_context;
  if (options_.tls) {
    tls_context = options_.tls();
    if (tls_context == nullptr) {
      BASALT_LOG_WARNING("No TLS context; refusing connection", "address", options_.address);
      return DoAccept();
    }
  }
  std::shared_ptr<SessionBase> session;
  bool accept_more = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    const std::uint64_t id = next_session_id_++;
    if (tls_context != nullptr) {
      session = std::make_shared<Session<TlsStream>>(this, id, std::move(socket), tls_context);
    } else {
      session = std::make_shared<Session<PlainStream>>(this, id, std::move(socket), nullptr);
    }
    sessions_.emplace(id, session);
    accept_more = static_cast<int>(sessions_.size()) < options_.max_connections;
    accept_paused_ = !accept_more;
  }
  session->Start();
  if (accept_more) DoAccept();
}

void HttpServer::Impl::OnSessionClosed(std::uint64_t id) {
  std::lock_guard<std::mutex> l(mu_);
  sessions_.erase(id);
  if (sessions_.empty()) sessions_closed_.notify_all();
  if (accept_paused_ && !stopping_) {
    accept_paused_ = false;
    asio::post(accept_strand_, [this] { DoAccept(); });
  }
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() = default;

HttpRouter& HttpServer::router() { return impl_->router(); }

absl::Status HttpServer::Start() { return impl_->Start(); }

void HttpServer::Stop() { impl_->Stop(); }

int HttpServer::port() const { return impl_->port(); }

}  // namespace basalt::runtime
