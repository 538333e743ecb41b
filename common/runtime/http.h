#pragma once
// Plain value types for Basalt's small HTTP servers (health, metrics, admission webhook)
// and the handler registry that maps method + path to a handler. Nothing here includes
// Boost: handlers and their tests see only these types; Beast stays in http_server.cc.

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace basalt::runtime {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // As sent: "/readyz?verbose"
  std::string path;    // Target up to '?': "/readyz"
  std::string query;   // After '?', undecoded: "verbose"
  HttpHeaders headers;
  std::string body;
  std::string remote_address;  // "ip:port" of the peer, for logs.

  // Value of the first header named `name` (case-insensitive), or "" if absent.
  std::string_view Header(std::string_view name) const;
  // True if the query has `name` as a key ("verbose", "verbose=1", "a&verbose").
  bool HasQueryParameter(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  HttpHeaders headers;  // Extra headers; Content-Type and Content-Length are set for you.
  std::string body;

  static HttpResponse Text(int status, std::string body);
  static HttpResponse Json(int status, std::string body);
};

// Handlers run on a server I/O thread: they must be quick or the server must have enough
// threads. They may throw; the server answers 500 then.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// HttpRouter maps (method, exact path) to a handler. Unknown paths get 404; a known path
// with another method gets 405 with an Allow header. Thread-safe: handlers may be added
// while requests are served.
class HttpRouter {
 public:
  // Registers `handler` for `method` ("GET") and `path` ("/healthz"), replacing any
  // previous handler for the pair.
  void Handle(std::string_view method, std::string_view path, HttpHandler handler);

  // Dispatches `request`. Never throws: a throwing handler gives a 500 response.
  HttpResponse Route(const HttpRequest& request) const;

 private:
  struct Entry {
    std::string method;
    std::string path;
    HttpHandler handler;
  };
  mutable std::mutex mu_;
  std::vector<Entry> routes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace basalt::runtime
