#include "common/ctrlkit/work_queue.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/ctrlkit/rate_limiter.h"
#include "common/ctrlkit/work_queue_metrics.h"
#include "common/util/clock.h"
#include "prometheus/registry.h"

namespace basalt::ctrlkit {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

WorkQueueOptions FakeOptions(FakeClock* clock, std::unique_ptr<RateLimiter> limiter = nullptr) {
  WorkQueueOptions options;
  options.name = "test";
  options.clock = clock;
  options.rate_limiter = std::move(limiter);
  return options;
}

TEST_CASE("WorkQueue: a key added many times before Get is processed once", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  queue.Add("ns/a");
  queue.Add("ns/b");
  queue.Add("ns/a");
  queue.Add("ns/a");
  REQUIRE(queue.Len() == 2);
  CHECK(queue.Get() == "ns/a");
  CHECK(queue.Get() == "ns/b");
  CHECK(queue.Len() == 0);
}

TEST_CASE("WorkQueue: a key re-added while in flight is processed once after Done", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  queue.Add("ns/a");
  REQUIRE(queue.Get() == "ns/a");
  queue.Add("ns/a");
  queue.Add("ns/a");
  // Not handed to a second worker while the first holds it.
  CHECK(queue.Len() == 0);
  queue.Done("ns/a");
  CHECK(queue.Len() == 1);
  CHECK(queue.Get() == "ns/a");
  queue.Done("ns/a");
  CHECK(queue.Len() == 0);
}

TEST_CASE("WorkQueue: Get blocks until a key is added", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  std::optional<std::string> got;
  std::thread worker([&] { got = queue.Get(); });
  queue.Add("ns/a");
  worker.join();
  CHECK(got == "ns/a");
}

TEST_CASE("WorkQueue: ShutDown wakes blocked workers, who drain queued keys first", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  std::optional<std::string> blocked = "unset";
  std::thread worker([&] { blocked = queue.Get(); });
  queue.ShutDown();
  worker.join();
  CHECK(blocked == std::nullopt);

  WorkQueue queue2(FakeOptions(&clock));
  queue2.Add("ns/a");
  queue2.Add("ns/b");
  queue2.ShutDown();
  CHECK(queue2.ShuttingDown());
  queue2.Add("ns/c");  // Ignored after shutdown.
  CHECK(queue2.Get() == "ns/a");
  CHECK(queue2.Get() == "ns/b");
  CHECK(queue2.Get() == std::nullopt);
}

TEST_CASE("WorkQueue: ShutDownWithDrain waits until in-flight keys are Done", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  queue.Add("ns/a");
  REQUIRE(queue.Get() == "ns/a");
  std::atomic<bool> drained{false};
  std::thread stopper([&] {
    queue.ShutDownWithDrain();
    drained = true;
  });
  // The drain waits on the clock with no deadline: block (no poll) until it does.
  REQUIRE(clock.WaitForTimerBy(Clock::TimePoint::max()));
  CHECK(queue.ShuttingDown());
  // "ns/a" is still in flight, so the drain cannot have finished.
  CHECK_FALSE(drained.load());
  queue.Done("ns/a");
  stopper.join();
  CHECK(drained.load());
  CHECK(queue.Get() == std::nullopt);
}

TEST_CASE("WorkQueue: eight workers never process one key concurrently and see every add",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  const std::vector<std::string> keys = {"ns/a", "ns/b", "ns/c"};
  constexpr int kAddsPerKey = 2000;

  std::mutex mu;
  std::map<std::string, int> in_flight;  // Workers currently inside the key.
  std::map<std::string, int> version;    // Bumped before every Add.
  std::map<std::string, int> last_seen;  // Version a worker saw when it started the key.
  std::atomic<bool> overlap{false};
  std::atomic<int> processed{0};

  std::vector<std::thread> workers;
  for (int w = 0; w < 8; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue.Get()) {
        {
          std::lock_guard<std::mutex> l(mu);
          if (++in_flight[*key] > 1) overlap = true;
          last_seen[*key] = version[*key];
        }
        // The mutex is released here, so another worker handed the same key would see
        // in_flight > 1.
        {
          std::lock_guard<std::mutex> l(mu);
          --in_flight[*key];
        }
        ++processed;
        queue.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (const std::string& key : keys) {
    producers.emplace_back([&, key] {
      for (int i = 0; i < kAddsPerKey; ++i) {
        {
          std::lock_guard<std::mutex> l(mu);
          ++version[key];
        }
        queue.Add(key);
      }
    });
  }
  for (auto& p : producers) p.join();
  queue.ShutDownWithDrain();
  for (auto& w : workers) w.join();

  CHECK_FALSE(overlap.load());
  CHECK(processed.load() <= 3 * kAddsPerKey);
  // Each key's final processing started after its final Add.
  for (const std::string& key : keys) CHECK(last_seen[key] == kAddsPerKey);
}

TEST_CASE("WorkQueue: AddAfter makes keys appear when the fake clock reaches their time",
          "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  queue.AddAfter("ns/late", seconds(10));
  queue.AddAfter("ns/early", seconds(5));
  queue.AddAfter("ns/now", seconds(0));
  CHECK(queue.Get() == "ns/now");
  CHECK(queue.Len() == 0);

  clock.Advance(seconds(5));
  CHECK(queue.Get() == "ns/early");
  CHECK(queue.Len() == 0);  // "ns/late" is due at 10s; the clock is at 5s.

  clock.Advance(seconds(5));
  CHECK(queue.Get() == "ns/late");
}

TEST_CASE("WorkQueue: AddAfter of a waiting key keeps the earlier time", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(&clock));
  queue.AddAfter("ns/a", seconds(10));
  queue.AddAfter("ns/a", seconds(2));
  queue.AddAfter("ns/a", seconds(30));
  clock.Advance(seconds(2));
  REQUIRE(queue.Get() == "ns/a");
  queue.Done("ns/a");

  // If the 10s entry had survived, "ns/a" would come out before the marker.
  queue.AddAfter("ns/marker", seconds(9));
  clock.Advance(seconds(9));
  CHECK(queue.Get() == "ns/marker");
  CHECK(queue.Len() == 0);
}

TEST_CASE("WorkQueue: an earlier delayed key wakes the delay thread (real clock)", "[workqueue]") {
  WorkQueueOptions options;
  options.name = "real";
  WorkQueue queue(std::move(options));
  queue.AddAfter("ns/hour", std::chrono::hours(1));
  queue.AddAfter("ns/soon", milliseconds(1));
  CHECK(queue.Get() == "ns/soon");
  // Destruction must not wait for the hour-long delay.
}

TEST_CASE("WorkQueue: AddRateLimited backs off exponentially and Forget resets", "[workqueue]") {
  FakeClock clock;
  WorkQueue queue(FakeOptions(
      &clock, std::make_unique<ItemExponentialFailureRateLimiter>(milliseconds(5), seconds(1000))));
  queue.AddRateLimited("ns/a");  // 5ms
  CHECK(queue.NumRequeues("ns/a") == 1);
  clock.Advance(milliseconds(5));
  REQUIRE(queue.Get() == "ns/a");
  queue.Done("ns/a");

  queue.AddRateLimited("ns/a");  // 10ms
  queue.AddAfter("ns/marker", milliseconds(9));
  clock.Advance(milliseconds(9));
  CHECK(queue.Get() == "ns/marker");
  CHECK(queue.Len() == 0);
  clock.Advance(milliseconds(1));
  CHECK(queue.Get() == "ns/a");
  CHECK(queue.NumRequeues("ns/a") == 2);

  queue.Forget("ns/a");
  CHECK(queue.NumRequeues("ns/a") == 0);
}

TEST_CASE("WorkQueue: metrics count adds, retries, depth and durations", "[workqueue]") {
  FakeClock clock;
  prometheus::Registry registry;
  WorkQueueMetrics metrics(registry);
  WorkQueueOptions options = FakeOptions(&clock);
  options.name = "jobs";
  options.metrics = &metrics;
  WorkQueue queue(std::move(options));

  queue.Add("ns/a");
  queue.Add("ns/a");
  queue.Add("ns/b");
  WorkQueueMetrics::Series series = metrics.ForQueue("jobs");
  CHECK(series.adds->Value() == 2);
  CHECK(series.depth->Value() == 2);

  REQUIRE(queue.Get() == "ns/a");
  clock.Advance(seconds(2));
  queue.Done("ns/a");
  queue.AddRateLimited("ns/a");
  CHECK(series.depth->Value() == 1);
  CHECK(series.retries->Value() == 1);

  const auto queue_hist = series.queue_duration->Collect().histogram;
  CHECK(queue_hist.sample_count == 1);
  const auto work_hist = series.work_duration->Collect().histogram;
  CHECK(work_hist.sample_count == 1);
  CHECK(work_hist.sample_sum == Approx(2.0));
}

TEST_CASE("ItemExponentialFailureRateLimiter: doubles per failure up to the cap, per key",
          "[ratelimiter]") {
  ItemExponentialFailureRateLimiter limiter(milliseconds(5), seconds(1));
  CHECK(limiter.When("a") == milliseconds(5));
  CHECK(limiter.When("a") == milliseconds(10));
  CHECK(limiter.When("a") == milliseconds(20));
  CHECK(limiter.When("a") == milliseconds(40));
  CHECK(limiter.When("b") == milliseconds(5));
  CHECK(limiter.NumRequeues("a") == 4);
  for (int i = 0; i < 100; ++i) limiter.When("a");  // 2^100 must not overflow.
  CHECK(limiter.When("a") == seconds(1));
  limiter.Forget("a");
  CHECK(limiter.NumRequeues("a") == 0);
  CHECK(limiter.When("a") == milliseconds(5));
  CHECK(limiter.NumRequeues("b") == 1);
}

TEST_CASE("ItemExponentialFailureRateLimiter: defaults are 5ms doubling to 1000s",
          "[ratelimiter]") {
  ItemExponentialFailureRateLimiter limiter;
  Clock::Duration d{};
  for (int i = 0; i < 18; ++i) d = limiter.When("a");
  CHECK(d == milliseconds(5) * (1 << 17));  // 655.36s
  CHECK(limiter.When("a") == seconds(1000));
}

TEST_CASE("BucketRateLimiter: a burst is free, then requests are spaced at qps", "[ratelimiter]") {
  FakeClock clock;
  BucketRateLimiter limiter(&clock, 10, 3);
  CHECK(limiter.When("a") == Clock::Duration::zero());
  CHECK(limiter.When("b") == Clock::Duration::zero());
  CHECK(limiter.When("c") == Clock::Duration::zero());
  CHECK(limiter.When("d") == milliseconds(100));
  CHECK(limiter.When("e") == milliseconds(200));
  clock.Advance(milliseconds(200));  // Pays back the two reserved tokens.
  CHECK(limiter.When("f") == milliseconds(100));
  clock.Advance(seconds(10));  // Refills to the burst, not beyond.
  CHECK(limiter.When("g") == Clock::Duration::zero());
  CHECK(limiter.When("h") == Clock::Duration::zero());
  CHECK(limiter.When("i") == Clock::Duration::zero());
  CHECK(limiter.When("j") == milliseconds(100));
  CHECK(limiter.NumRequeues("a") == 0);
}

TEST_CASE("DefaultControllerRateLimiter: the longest of backoff and the overall bucket",
          "[ratelimiter]") {
  FakeClock clock;
  auto limiter = DefaultControllerRateLimiter(&clock);
  // 100 distinct keys use up the burst with only the 5ms first backoff.
  for (int i = 0; i < 100; ++i) {
    CHECK(limiter->When(std::to_string(i)) == milliseconds(5));
  }
  // Now the 10 qps bucket dominates the per-key backoff.
  CHECK(limiter->When("x") == milliseconds(100));
  CHECK(limiter->NumRequeues("x") == 1);
  limiter->Forget("x");
  CHECK(limiter->NumRequeues("x") == 0);
}

}  // namespace
}  // namespace basalt::ctrlkit
