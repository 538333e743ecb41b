#include "common/util/async_writer.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
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

TEST_CASE("AsyncWriter: items of one key are never handled concurrently, nor out of order",
          "[asyncwriter]") {
  Gate gate;
  gate.Close();
  AsyncWriter<std::string> writer({.name = "test", .workers = 3},
                                  [&](std::string& s) { gate.Write(s); });
  CHECK(writer.Enqueue("k", "k1") == Admission::kQueued);
  gate.WaitStarted(1);                                     // k1 in flight
  CHECK(writer.Enqueue("k", "k2") == Admission::kQueued);  // waits behind k1 ...
  CHECK(writer.Enqueue("other") == Admission::kQueued);    // ... which others pass
  gate.WaitStarted(2);
  CHECK(writer.stats().in_flight == 2);  // k1 and "other", not k2 on the third worker
  CHECK(writer.stats().queued == 1);
  gate.Open();
  writer.Flush();
  const std::vector<std::string> w =
      writer.stats().handled == 3 ? gate.written() : std::vector<std::string>{};
  REQUIRE(w.size() == 3);
  CHECK(std::find(w.begin(), w.end(), "k1") < std::find(w.begin(), w.end(), "k2"));
}

TEST_CASE("AsyncWriter: a key's min_interval spaces its writes and coalesces what comes between",
          "[asyncwriter]") {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, Clock::TimePoint>> written;
  AsyncWriter<std::string> writer({.name = "test", .workers = 2, .clock = &clock},
                                  [&](std::string& s) {
                                    std::lock_guard<std::mutex> l(mu);
                                    written.emplace_back(s, clock.Now());
                                    cv.notify_all();
                                  });
  auto wait_written = [&](size_t n) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(10), [&] { return written.size() >= n; });
  };
  const Clock::TimePoint t0 = clock.Now();
  const auto interval = std::chrono::seconds(1);
  writer.Enqueue("q", "v1", interval);
  REQUIRE(wait_written(1));  // the first goes at once
  writer.Enqueue("q", "v2", interval);
  REQUIRE(clock.WaitForTimerBy(t0 + interval));  // held until a second after v1
  CHECK(writer.Enqueue("q", "v3", interval) == Admission::kCoalesced);
  writer.Enqueue("fifo");  // passes the held one
  REQUIRE(wait_written(2));
  clock.Advance(interval);
  REQUIRE(wait_written(3));
  writer.Flush();
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(written.size() == 3);
  CHECK(written[0] == std::make_pair(std::string("v1"), t0));
  CHECK(written[1].first == "fifo");
  CHECK(written[2] == std::make_pair(std::string("v3"), t0 + interval));
}

TEST_CASE("AsyncWriter: Shutdown writes what an interval holds without waiting it out",
          "[asyncwriter]") {
  FakeClock clock;
  std::vector<std::string> written;
  AsyncWriter<std::string> writer({.name = "test", .workers = 1, .clock = &clock},
                                  [&](std::string& s) { written.push_back(s); });
  writer.Enqueue("q", "v1", std::chrono::hours(1));
  writer.Flush();
  writer.Enqueue("q", "v2", std::chrono::hours(1));
  REQUIRE(clock.WaitForTimers(1));
  writer.Shutdown();
  CHECK(written == std::vector<std::string>{"v1", "v2"});
}

// A writer on a fake clock whose handler records (item, time written).
struct TimedWrites {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, Clock::TimePoint>> written;
  AsyncWriter<std::string> writer{{.name = "test", .workers = 2, .clock = &clock},
                                  [this](std::string& s) {
                                    std::lock_guard<std::mutex> l(mu);
                                    written.emplace_back(s, clock.Now());
                                    cv.notify_all();
                                  }};
  bool WaitWritten(size_t n) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(10), [&] { return written.size() >= n; });
  }
  std::vector<std::pair<std::string, Clock::TimePoint>> Written() {
    std::lock_guard<std::mutex> l(mu);
    return written;
  }
};

TEST_CASE("AsyncWriter: a held item waits out its hold while other items pass it",
          "[asyncwriter]") {
  TimedWrites t;
  const Clock::TimePoint t0 = t.clock.Now();
  const auto hold = std::chrono::seconds(2);
  CHECK(t.writer.EnqueueHeld("pg", "running", hold) == Admission::kQueued);
  REQUIRE(t.clock.WaitForTimerBy(t0 + hold));  // a worker waits for the hold to end
  t.writer.Enqueue("other", "x");
  t.writer.Enqueue("fifo");
  REQUIRE(t.WaitWritten(2));
  for (const auto& [item, at] : t.Written()) CHECK(item != "running");  // still held
  t.clock.Advance(hold);
  REQUIRE(t.WaitWritten(3));
  const auto w = t.Written();
  REQUIRE(w.size() == 3);
  CHECK(w[2] == std::make_pair(std::string("running"), t0 + hold));
  CHECK(t.writer.stats().held == 1);
}

TEST_CASE("AsyncWriter: a newer Enqueue of a held key replaces it and goes at once",
          "[asyncwriter]") {
  TimedWrites t;
  const Clock::TimePoint t0 = t.clock.Now();
  t.writer.EnqueueHeld("pg", "running", std::chrono::seconds(2));
  REQUIRE(t.clock.WaitForTimerBy(t0 + std::chrono::seconds(2)));
  CHECK(t.writer.Enqueue("pg", "running=1") == Admission::kCoalesced);
  REQUIRE(t.WaitWritten(1));
  t.writer.Flush();
  const auto w = t.Written();
  REQUIRE(w.size() == 1);  // one write carries both changes, without waiting for the hold
  CHECK(w[0] == std::make_pair(std::string("running=1"), t0));
}

TEST_CASE("AsyncWriter: a newer EnqueueHeld keeps the earlier deadline", "[asyncwriter]") {
  TimedWrites t;
  const Clock::TimePoint t0 = t.clock.Now();
  t.writer.EnqueueHeld("pg", "v1", std::chrono::seconds(2));
  REQUIRE(t.clock.WaitForTimerBy(t0 + std::chrono::seconds(2)));
  t.clock.Advance(std::chrono::seconds(1));
  CHECK(t.writer.EnqueueHeld("pg", "v2", std::chrono::seconds(2)) == Admission::kCoalesced);
  t.clock.Advance(std::chrono::seconds(1));  // two seconds after v1, one after v2
  REQUIRE(t.WaitWritten(1));
  const auto w = t.Written();
  REQUIRE(w.size() == 1);
  CHECK(w[0] == std::make_pair(std::string("v2"), t0 + std::chrono::seconds(2)));
}

TEST_CASE("AsyncWriter: Flush and Shutdown send held items without waiting out the hold",
          "[asyncwriter]") {
  TimedWrites t;
  const Clock::TimePoint t0 = t.clock.Now();
  t.writer.EnqueueHeld("a", "a1", std::chrono::hours(1));
  t.writer.Flush();
  t.writer.EnqueueHeld("b", "b1", std::chrono::hours(1));
  REQUIRE(t.clock.WaitForTimerBy(t0 + std::chrono::hours(1)));
  t.writer.Shutdown();
  const auto w = t.Written();
  REQUIRE(w.size() == 2);
  CHECK(w[0] == std::make_pair(std::string("a1"), t0));
  CHECK(w[1] == std::make_pair(std::string("b1"), t0));
}

}  // namespace
}  // namespace basalt
