#include "common/client/testing/fake_transport.h"

#include "fmt/format.h"

namespace basalt::client {

void FakeTransport::AddResponse(std::string verb, std::string path,
                                absl::StatusOr<Response> response) {
  std::lock_guard<std::mutex> l(mu_);
  scripts_.push_back(Script{std::move(verb), std::move(path), false, std::move(response), {}});
}

void FakeTransport::AddJson(std::string verb, std::string path, int status_code, std::string body) {
  Response r;
  r.status_code = status_code;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = std::move(body);
  AddResponse(std::move(verb), std::move(path), std::move(r));
}

void FakeTransport::AddStream(std::string path, StreamScript script) {
  std::lock_guard<std::mutex> l(mu_);
  scripts_.push_back(Script{"GET", std::move(path), true, Response{}, std::move(script)});
}

void FakeTransport::SetFallback(std::function<absl::StatusOr<Response>(const Request&)> fallback) {
  std::lock_guard<std::mutex> l(mu_);
  fallback_ = std::move(fallback);
}

std::vector<Request> FakeTransport::requests() const {
  std::lock_guard<std::mutex> l(mu_);
  return requests_;
}

Request FakeTransport::last_request() const {
  std::lock_guard<std::mutex> l(mu_);
  return requests_.empty() ? Request{} : requests_.back();
}

size_t FakeTransport::pending_scripts() const {
  std::lock_guard<std::mutex> l(mu_);
  return scripts_.size();
}

void FakeTransport::WaitForHeldStream() const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return held_streams_ > 0; });
}

bool FakeTransport::Matches(const Script& s, const Request& r, bool stream) {
  if (s.stream != stream) return false;
  if (!s.verb.empty() && s.verb != r.verb) return false;
  if (s.path.empty()) return true;
  if (s.path.back() == '*') {
    return r.path.compare(0, s.path.size() - 1, s.path, 0, s.path.size() - 1) == 0;
  }
  return s.path == r.path;
}

absl::StatusOr<Response> FakeTransport::Do(const Request& request) {
  std::function<absl::StatusOr<Response>(const Request&)> fallback;
  {
    std::lock_guard<std::mutex> l(mu_);
    requests_.push_back(request);
    for (auto it = scripts_.begin(); it != scripts_.end(); ++it) {
      if (Matches(*it, request, false)) {
        absl::StatusOr<Response> r = std::move(it->response);
        scripts_.erase(it);
        return r;
      }
    }
    fallback = fallback_;
  }
  if (fallback) return fallback(request);
  return absl::FailedPreconditionError(
      fmt::format("FakeTransport: no response scripted for {} {}", request.verb, request.path));
}

absl::StatusOr<Response> FakeTransport::Stream(const Request& request, const LineCallback& on_line,
                                               CancelToken* cancel) {
  StreamScript script;
  {
    std::lock_guard<std::mutex> l(mu_);
    requests_.push_back(request);
    auto it = scripts_.begin();
    for (; it != scripts_.end(); ++it) {
      if (Matches(*it, request, true)) break;
    }
    if (it == scripts_.end()) {
      return absl::FailedPreconditionError(
          fmt::format("FakeTransport: no stream scripted for {} {}", request.verb, request.path));
    }
    script = std::move(it->stream_script);
    scripts_.erase(it);
  }
  if (!script.error.ok()) return script.error;
  Response response;
  response.status_code = script.status_code;
  if (script.status_code < 200 || script.status_code >= 300) {
    response.body = script.body;
    return response;
  }
  LineFramer framer;
  for (const std::string& chunk : script.chunks) {
    if (cancel != nullptr && cancel->cancelled()) return response;
    absl::Status s = framer.Feed(chunk, on_line);
    if (!s.ok()) return s;
  }
  if (script.hold_until_cancelled && cancel != nullptr) {
    bool fired = false;  // guarded by mu_
    // The canceller takes mu_, and CancelToken holds its own lock while calling it: never call
    // into the token while holding mu_.
    cancel->SetCanceller([this, &fired] {
      std::lock_guard<std::mutex> inner(mu_);
      fired = true;
      cv_.notify_all();
    });
    {
      std::unique_lock<std::mutex> l(mu_);
      ++held_streams_;
      cv_.notify_all();
      cv_.wait(l, [&] { return fired; });
      --held_streams_;
    }
    cancel->ClearCanceller();
    return response;
  }
  absl::Status s = framer.Finish(on_line);
  if (!s.ok()) return s;
  return response;
}

}  // namespace basalt::client
