#pragma once
// Printer: where vcctl's output goes. Lines from the waiter and the log follower (two threads)
// come out whole and in order, each flushed at once so a CI log shows them live.
//
// Thread-safe. Does not own the streams.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <ostream>
#include <string_view>

namespace basalt::cli {

class Printer {
 public:
  Printer(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}
  Printer(const Printer&) = delete;
  Printer& operator=(const Printer&) = delete;

  // Writes `text` and a newline unless it ends with one.
  void Out(std::string_view text) { Write(out_, text); }
  void Err(std::string_view text) { Write(err_, text); }

  // For tests: waits until `done()` (evaluated after each write, under the lock) holds, at most
  // `timeout`; returns whether it did.
  bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, done);
  }

 private:
  void Write(std::ostream& s, std::string_view text) {
    {
      std::lock_guard<std::mutex> l(mu_);
      s << text;
      if (text.empty() || text.back() != '\n') s << '\n';
      s.flush();
    }
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace basalt::cli
