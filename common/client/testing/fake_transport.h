#pragma once
// FakeTransport: an in-memory Transport for unit tests. It records every request and answers
// from a script of responses, so tests of controllers, informers and the client run without a
// network. Streams (watches) are scripted as body chunks that go through the same line framing
// as the real transport, and can be held open until cancelled.
//
//   auto fake = std::make_unique<FakeTransport>();
//   FakeTransport* t = fake.get();
//   t->AddJson("GET", "/api/v1/namespaces/ns/pods/p1", 200, R"({"kind":"Pod",...})");
//   Client client(std::move(fake));
//   ... client.Get(Pods(), "ns", "p1") ...
//   REQUIRE(t->requests().size() == 1);
//
// Thread-safe.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "common/client/transport.h"

namespace basalt::client {

class FakeTransport : public Transport {
 public:
  struct StreamScript {
    int status_code = 200;
    std::vector<std::string> chunks;  // body bytes, split anywhere
    std::string body;                 // body of a non-2xx answer
    absl::Status error;               // if not OK, Stream() fails with it before any chunk
    // After the chunks, keep the stream open until the CancelToken fires (like a quiet watch).
    bool hold_until_cancelled = false;
  };

  // Scripted answers are used once each, first match first. `verb` "" matches any verb; `path`
  // matches the request's path+query exactly, or as a prefix when it ends with '*', or any
  // path when empty.
  void AddResponse(std::string verb, std::string path, absl::StatusOr<Response> response);
  void AddJson(std::string verb, std::string path, int status_code, std::string body);
  void AddStream(std::string path, StreamScript script);
  // Answers requests no script matches (default: kFailedPrecondition naming the request).
  void SetFallback(std::function<absl::StatusOr<Response>(const Request&)> fallback);

  std::vector<Request> requests() const;
  Request last_request() const;  // default Request if none
  size_t pending_scripts() const;
  // Blocks until a Stream() call is waiting in hold_until_cancelled (for cancellation tests).
  void WaitForHeldStream() const;

  absl::StatusOr<Response> Do(const Request& request) override;
  absl::StatusOr<Response> Stream(const Request& request, const LineCallback& on_line,
                                  CancelToken* cancel) override;

 private:
  struct Script {
    std::string verb;
    std::string path;
    bool stream = false;
    absl::StatusOr<Response> response;
    StreamScript stream_script;
  };
  static bool Matches(const Script& s, const Request& r, bool stream);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<Script> scripts_;
  std::vector<Request> requests_;
  std::function<absl::StatusOr<Response>(const Request&)> fallback_;
  int held_streams_ = 0;
};

}  // namespace basalt::client
