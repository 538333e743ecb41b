#include "common/util/async_writer.h"

#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace basalt {
namespace {

// A handler that records what it wrote and can be held inside a write until released, so a
// test knows exactly what is waiting (no sleeps).
class Gate {
 public:
  void Write(const std::string& item) {
    std::unique_lock<std::mutex> l(mu_);
    ++started_;
    cv_.notify_all();
    cv_.wait(l, [this] { return open_; });
    written_.push_back(item);
  }
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Waits until `n` writes have started (the worker is inside the handler).
  void WaitStarted(int n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return started_ >= n; });
  }
  std::vector<std::string> written() {
    std::lock_guard<std::mutex> l(mu_);
    return written_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int started_ = 0;
  std::vector<std::string> written_;
};

TEST_CASE("AsyncWriter: one worker writes in FIFO order and Shutdown drains the queue",
          "[asyncwriter]") {
  Gate gate;
  gate.Close();
  AsyncWriter<std::string> writer({.name = "test", .workers = 1},
                                  [&](std::string& s) { gate.Write(s); });
  for (const char* s : {"a", "b", "c", "d"}) CHECK(writer.Enqueue(s) == Admission::kQueued);
  gate.WaitStarted(1);
  CHECK(writer.pending() == 4);
  gate.Open();
  writer.Shutdown();
  CHECK(gate.written() == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(writer.pending() == 0);
  CHECK(writer.stats().handled == 4);
  CHECK(writer.Enqueue("late") == Admission::kShutdown);
  CHECK(writer.stats().refused_shutdown == 1);
  CHECK(gate.written().size() == 4);
}

TEST_CASE("AsyncWriter: a keyed item still waiting is replaced in place by a newer one",
          "[asyncwriter]") {
  Gate gate;
  gate.Close();
  AsyncWriter<std::string> writer({.name = "test", .workers = 1},
                                  [&](std::string& s) { gate.Write(s); });
  CHECK(writer.Enqueue("busy", "busy") == Admission::kQueued);
  gate.WaitStarted(1);  // "busy" is being written; the rest waits
  CHECK(writer.Enqueue("pg/a", "a1") == Admission::kQueued);
  CHECK(writer.Enqueue("pg/b", "b1") == Admission::kQueued);
  CHECK(writer.Enqueue("pg/a", "a2") == Admission::kCoalesced);
  CHECK(writer.Enqueue("busy", "busy2") == Admission::kQueued);  // the first left the queue
  gate.Open();
  writer.Flush();
  CHECK(gate.written() == std::vector<std::string>{"busy", "a2", "b1", "busy2"});
  const AsyncWriterStats stats = writer.stats();
  CHECK(stats.enqueued == 4);
  CHECK(stats.coalesced == 1);
  CHECK(stats.handled == 4);
  CHECK(stats.queued == 0);
  CHECK(stats.in_flight == 0);
}

TEST_CASE("AsyncWriter: a bounded queue refuses items when full without blocking",
          "[asyncwriter]") {
  Gate gate;
  gate.Close();
  AsyncWriter<std::string> writer({.name = "test", .workers = 1, .capacity = 2},
                                  [&](std::string& s) { gate.Write(s); });
  CHECK(writer.Enqueue("0") == Admission::kQueued);
  gate.WaitStarted(1);  // in flight: not counted against the capacity
  CHECK(writer.Enqueue("1") == Admission::kQueued);
  CHECK(writer.Enqueue("2") == Admission::kQueued);
  CHECK(writer.Enqueue("3") == Admission::kFull);
  CHECK(writer.stats().refused_full == 1);
  gate.Open();
  writer.Shutdown();
  CHECK(gate.written() == std::vector<std::string>{"0", "1", "2"});
}

TEST_CASE("AsyncWriter: several workers write concurrently and Flush waits for all of them",
          "[asyncwriter]") {
  Gate gate;
  gate.Close();
  AsyncWriter<std::string> writer({.name = "test", .workers = 3},
                                  [&](std::string& s) { gate.Write(s); });
  for (int i = 0; i < 3; ++i) writer.Enqueue(std::to_string(i));
  gate.WaitStarted(3);  // three writes in flight at once
  CHECK(writer.stats().in_flight == 3);
  for (int i = 3; i < 10; ++i) writer.Enqueue(std::to_string(i));
  gate.Open();
  writer.Flush();
  CHECK(gate.written().size() == 10);
  CHECK(writer.pending() == 0);
  writer.Shutdown();
  writer.Shutdown();  // idempotent
}

}  // namespace
}  // namespace basalt
