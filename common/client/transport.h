#pragma once
// Transport is the seam between Basalt's REST client and the wire. A Transport sends one
// HTTP request to the API server and returns the response, or streams a response body line by
// line (watches). Nothing outside common/client/*.cc sees Boost: the real HTTPS implementation
// (NewHttpsTransport in https_transport.h) and the in-memory FakeTransport
// (testing/fake_transport.h) both sit behind this interface.
//
// Thread-safety: every Transport implementation is safe for concurrent use by many threads.

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace basalt::client {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive header lookup; empty when absent.
std::string_view FindHeader(const Headers& headers, std::string_view name);

struct Request {
  std::string verb = "GET";  // GET, POST, PUT, PATCH, DELETE
  std::string path;          // path and query, e.g. "/api/v1/namespaces/ns/pods?limit=500"
  Headers headers;           // extra headers (Content-Type, Accept, ...)
  std::string body;
  // Whole-request deadline for Do(); for Stream() the deadline of connect + response headers.
  // Zero means the transport's default.
  std::chrono::milliseconds timeout{0};
  // Stream() only: the stream fails with kDeadlineExceeded when no byte arrives for this long.
  // Zero means wait forever.
  std::chrono::milliseconds stream_idle_timeout{0};
  // Retries allowed for this request; -1 means the transport's policy. Eviction sets 0: a 429
  // there means "a disruption budget forbids it", which the caller must see.
  int max_retries = -1;
};

struct Response {
  int status_code = 0;
  Headers headers;
  std::string body;

  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }
};

// A CancelToken stops a running Transport::Stream from any thread. Cancel() is sticky: a
// stream started after Cancel() ends at once. Thread-safe; the caller owns the token and keeps
// it alive until Stream() returns.
class CancelToken {
 public:
  CancelToken() = default;
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void Cancel();
  bool cancelled() const;

  // For Transport implementations: `fn` runs (once) on Cancel(), or right away if already
  // cancelled. ClearCanceller() must be called before whatever `fn` touches is destroyed; it
  // waits for a concurrent Cancel() to finish.
  void SetCanceller(std::function<void()> fn);
  void ClearCanceller();

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::function<void()> canceller_;
};

// Receives one line of a streamed body, without the trailing "\n" (and "\r"). Returning a
// non-OK status ends the stream; Stream() then returns that status.
using LineCallback = std::function<absl::Status(std::string_view line)>;

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends `request` and returns the response whatever its HTTP status. A non-OK Status means no
  // response was obtained: kUnavailable (connect refused, connection reset), kDeadlineExceeded
  // (timeout), kFailedPrecondition (the server certificate does not verify: wrong CA or name),
  // kInvalidArgument (malformed request).
  virtual absl::StatusOr<Response> Do(const Request& request) = 0;

  // Sends `request` and, if the server answers 2xx, calls `on_line` for every line of the body
  // as it arrives (lines may span any number of chunks). Returns the response (empty body) when
  // the server ends the body or `cancel` is cancelled. A non-2xx answer is returned whole and
  // `on_line` is never called. `cancel` may be null.
  virtual absl::StatusOr<Response> Stream(const Request& request, const LineCallback& on_line,
                                          CancelToken* cancel) = 0;

  // What this transport authenticates with, for error messages when the server answers 401
  // ("bearer token from file /var/run/.../token (in-cluster service account)"). Never the
  // secret itself. Empty when unknown.
  virtual std::string CredentialsDescription() const { return {}; }
};

// Splits a byte stream into '\n'-terminated lines, whatever the chunk boundaries. Not
// thread-safe (one per stream).
class LineFramer {
 public:
  // Feeds the next bytes; calls `on_line` for each completed line (without "\n" or a trailing
  // "\r"; empty lines are skipped). Stops at, and returns, the first non-OK callback status.
  absl::Status Feed(std::string_view bytes, const LineCallback& on_line);
  // Delivers a final line that had no trailing "\n" (end of body).
  absl::Status Finish(const LineCallback& on_line);
  size_t buffered() const { return partial_.size(); }

 private:
  std::string partial_;
};

}  // namespace basalt::client
