#pragma once
// A WorkQueue hands keys ("namespace/name") to controller workers with client-go's
// workqueue semantics:
//
//  - Dedup: a key added many times before a worker Get()s it is processed once.
//  - Exclusive: a key is never handed to two workers at once. A key re-added while a worker
//    holds it is processed once more after that worker calls Done().
//  - Get() blocks until a key is available or the queue is shut down and empty.
//  - AddAfter() delays a key on the injected Clock; AddRateLimited() delays it by the
//    RateLimiter (per-key exponential backoff and an overall token bucket by default);
//    Forget() resets the key's backoff once it was processed successfully.
//  - ShutDown() stops accepting keys; workers still drain the keys already queued and then
//    Get() returns nullopt. ShutDownWithDrain() also waits until every key handed out has
//    been Done(). Keys still waiting for their delay are dropped.
//
// Typical worker:
//
//   while (auto key = queue.Get()) {
//     absl::Status s = Sync(*key);
//     if (s.ok()) queue.Forget(*key); else queue.AddRateLimited(*key);
//     queue.Done(*key);
//   }
//
// Delays: a background thread moves delayed keys into the queue when the clock reaches
// their time. It waits on the Clock's timer (Clock::WaitUntil) for the earliest deadline, so
// an earlier key or ShutDown wakes it at once, and with FakeClock it wakes when Advance()
// reaches the deadline: tests neither sleep for the delay nor poll.
//
// Thread-safety: all methods are safe to call from any thread. Ownership: the Clock and the
// optional WorkQueueMetrics must outlive the queue; the queue owns its RateLimiter.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "common/ctrlkit/rate_limiter.h"
#include "common/ctrlkit/work_queue_metrics.h"
#include "common/util/clock.h"

namespace basalt::ctrlkit {

struct WorkQueueOptions {
  // Names the queue in logs and in the metrics' `name` label.
  std::string name;
  // Time source for delays and rate limits; nullptr means Clock::Real().
  Clock* clock = nullptr;
  // Used by AddRateLimited/Forget/NumRequeues; nullptr means
  // DefaultControllerRateLimiter(clock).
  std::unique_ptr<RateLimiter> rate_limiter;
  // Optional; nullptr records nothing.
  WorkQueueMetrics* metrics = nullptr;
};

class WorkQueue {
 public:
  explicit WorkQueue(WorkQueueOptions options);
  // Shuts the queue down (without drain) and joins the delay thread.
  ~WorkQueue();

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `key` unless it is already waiting; if a worker holds it, it is queued again
  // when that worker calls Done(). Ignored after shutdown.
  void Add(const std::string& key);

  // Blocks until a key is available and marks it as being processed; the caller must call
  // Done(key) when finished. Returns nullopt once the queue is shut down and empty.
  std::optional<std::string> Get();

  // Marks `key` as processed. If it was re-added meanwhile, it is queued again.
  void Done(const std::string& key);

  // Adds `key` once `delay` has passed on the clock. If the key already waits for a delay,
  // the earlier of the two times wins. A delay <= 0 is a plain Add. Ignored after shutdown.
  void AddAfter(const std::string& key, Clock::Duration delay);

  // AddAfter(key, rate_limiter.When(key)): a retry with backoff.
  void AddRateLimited(const std::string& key);
  // Resets the key's backoff (call after a successful sync). Does not remove the key.
  void Forget(const std::string& key);
  // Retries of `key` since it was last forgotten.
  int NumRequeues(const std::string& key);

  // Stops accepting keys and wakes blocked Get() calls; they drain the queued keys, then
  // return nullopt. Delayed keys are dropped. Does not wait.
  void ShutDown();
  // ShutDown(), then blocks until every key handed out by Get() has been Done(). Workers
  // must keep calling Done() (and may keep calling Get()) for this to return. It waits through
  // Clock::WaitUntil with no deadline, so a test on FakeClock sees the drain waiting
  // (WaitForTimerBy(TimePoint::max())) without polling.
  void ShutDownWithDrain();
  bool ShuttingDown() const;

  // Keys waiting for a worker (not those in flight, not those waiting for a delay).
  std::size_t Len() const;

 private:
  void AddLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateDepthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DelayLoop();

  const std::string name_;
  Clock* const clock_;
  const std::unique_ptr<RateLimiter> rate_limiter_;
  const std::optional<WorkQueueMetrics::Series> metrics_;

  // std::mutex, not absl::Mutex: Debian's libabsl is not built with ThreadSanitizer, so
  // absl::Mutex is invisible to BASALT_TSAN builds and every access under it shows up as
  // a false race. Pthread-based std::mutex is intercepted by TSan.
  mutable std::mutex mu_;
  // Woken for Get() waiters (new key, shutdown) and for ShutDownWithDrain (in-flight done).
  std::condition_variable cond_;
  // Woken for the delay thread (earlier deadline, shutdown).
  std::condition_variable delay_cond_;

  // Keys in processing order.
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  // Keys that need processing: everything in queue_ plus in-flight keys re-added.
  std::unordered_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  // Keys handed out by Get() and not yet Done().
  std::unordered_set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool drain_ ABSL_GUARDED_BY(mu_) = false;

  // Delayed keys: ordered by ready time, plus the ready time of each key for dedup.
  std::set<std::pair<Clock::TimePoint, std::string>> waiting_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Clock::TimePoint> waiting_ready_at_ ABSL_GUARDED_BY(mu_);

  // Metric timestamps, kept only when metrics_ is set.
  std::unordered_map<std::string, Clock::TimePoint> added_at_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Clock::TimePoint> started_at_ ABSL_GUARDED_BY(mu_);

  std::thread delay_thread_;
};

}  // namespace basalt::ctrlkit
