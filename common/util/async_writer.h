#pragma once
// AsyncWriter<Item> hands items to a small pool of worker threads that write them somewhere
// slow (the API server), so that the producer (the scheduling thread, an informer handler)
// never blocks on I/O. It is the one queue behind the scheduler's binder, status writer and
// evictor and the EventRecorder:
//
//  - Enqueue(item) queues in FIFO order. Enqueue(key, item) coalesces: while an item with the
//    same key still waits, the new one replaces it in place (so an object is written at most
//    once per burst, with its latest content, at the position of the first request). Items of
//    one key are handled one at a time, in order: a newer write of an object never overtakes
//    (or races) an older one on another worker. Enqueue(key, item, min_interval) also keeps
//    the key's items at least `min_interval` apart (after the previous one was handled); what
//    arrives meanwhile coalesces, so a fast-changing object is written at most once per
//    interval with its latest content. Other items pass the waiting one.
//  - EnqueueHeld(key, item, hold) queues a keyed item that is handled no sooner than `hold`
//    from now: for an object that is expected to change again shortly, so that one write
//    carries both changes. A newer item of the key replaces the held one while it waits (an
//    Enqueue releases it at once; another EnqueueHeld keeps the earlier deadline, so a hold
//    never delays a write by more than `hold`); Flush() and Shutdown() send held items at once.
//  - A bounded writer (`capacity` > 0) refuses items when full; nothing is dropped silently:
//    Enqueue says why it refused, and stats() counts it.
//  - Flush() waits until everything queued so far has been handled (held items are sent without
//    waiting out their hold); Shutdown() stops accepting, lets the workers drain the queue, and
//    joins them.
//
//   AsyncWriter<BindRequest> binds({.name = "binder", .workers = 4},
//                                  [&](BindRequest& r) { Send(r); });
//   binds.Enqueue(std::move(request));
//
// Thread-safety: every method may be called from any thread (the handler must not call
// Flush() or Shutdown() of its own writer). Items are handled concurrently when `workers` > 1,
// except items of the same key; coalescing applies to waiting items only (an item with a key
// being handled does not absorb a newer one, which is queued and written after it). Ownership: owns
// its workers and queued items; the handler runs on the workers and everything it uses must stay
// valid until Shutdown() returns (declare the writer after what its handler uses).

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/util/clock.h"

namespace basalt {

struct AsyncWriterOptions {
  std::string name;  // what it writes, for diagnostics ("binds", "events")
  int workers = 1;
  // Items waiting (not counting those being handled); 0 means unbounded.
  std::size_t capacity = 0;
  // Times the min_interval of keyed items; nullptr means Clock::Real(). Must outlive the writer.
  Clock* clock = nullptr;
};

struct AsyncWriterStats {
  uint64_t enqueued = 0;          // accepted as a new queue entry
  uint64_t coalesced = 0;         // replaced a waiting item with the same key
  uint64_t held = 0;              // EnqueueHeld calls accepted (queued or coalesced)
  uint64_t handled = 0;           // handler returned
  uint64_t refused_full = 0;      // Enqueue found the queue at capacity
  uint64_t refused_shutdown = 0;  // Enqueue after Shutdown()
  std::size_t queued = 0;         // waiting now
  std::size_t in_flight = 0;      // being handled now
};

enum class Admission { kQueued, kCoalesced, kFull, kShutdown };

template <typename Item>
class AsyncWriter {
 public:
  using Handler = std::function<void(Item&)>;

  // Starts max(1, workers) worker threads calling `handler` for each item.
  AsyncWriter(AsyncWriterOptions options, Handler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        clock_(options_.clock != nullptr ? options_.clock : Clock::Real()) {
    const int n = std::max(1, options_.workers);
    workers_.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) workers_.emplace_back([this] { Work(); });
  }
  ~AsyncWriter() { Shutdown(); }
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;

  // Queues `item` at the back. kFull or kShutdown when refused (the item is dropped).
  Admission Enqueue(Item item) { return Add(std::string(), std::move(item)); }
  // As above, but an item with the same non-empty `key` still waiting is replaced in place
  // (kCoalesced).
  Admission Enqueue(std::string key, Item item) { return Add(std::move(key), std::move(item)); }
  // As above, and handled no sooner than `min_interval` after the key's previous item was
  // (a coalesced item keeps the interval it was queued with). Shutdown() ignores intervals.
  Admission Enqueue(std::string key, Item item, Clock::Duration min_interval) {
    return Add(std::move(key), std::move(item), min_interval);
  }

  // As Enqueue(key, item), but handled no sooner than `hold` from now unless replaced (an empty
  // `key` is not held: it is an Enqueue(item)): a newer
  // Enqueue(key, ...) of the key releases it at once (with the newer content), a newer
  // EnqueueHeld keeps the earliest deadline. Flush() and Shutdown() ignore holds.
  Admission EnqueueHeld(std::string key, Item item, Clock::Duration hold) {
    return Add(std::move(key), std::move(item), {}, hold);
  }

  // Blocks until the queue is empty and no handler runs (items queued meanwhile included).
  // Held items are handled at once while a Flush() waits.
  void Flush() {
    std::unique_lock<std::mutex> l(mu_);
    ++flushing_;
    ready_.notify_all();
    idle_.wait(l, [this] { return queue_.empty() && in_flight_ == 0; });
    --flushing_;
  }

  // Refuses new items, handles those queued, then joins the workers. Idempotent; concurrent
  // callers all return once the workers are gone.
  void Shutdown() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
    }
    ready_.notify_all();
    std::lock_guard<std::mutex> join(join_mu_);
    for (std::thread& t : workers_) {
      if (t.joinable()) t.join();
    }
  }

  // True once Shutdown() has been called.
  bool stopped() const {
    std::lock_guard<std::mutex> l(mu_);
    return stopping_;
  }
  // Items waiting or being handled.
  std::size_t pending() const {
    std::lock_guard<std::mutex> l(mu_);
    return queue_.size() + in_flight_;
  }
  AsyncWriterStats stats() const {
    std::lock_guard<std::mutex> l(mu_);
    AsyncWriterStats s = stats_;
    s.queued = queue_.size();
    s.in_flight = in_flight_;
    return s;
  }
  const AsyncWriterOptions& options() const { return options_; }

 private:
  struct Entry {
    std::string key;  // "" for FIFO items
    Item item;
    Clock::Duration min_interval{};
    bool held = false;  // not handled before `held_until` (EnqueueHeld)
    Clock::TimePoint held_until{};
  };

  // `hold`: EnqueueHeld's hold (nullopt for the other Enqueues).
  Admission Add(std::string key, Item item, Clock::Duration min_interval = {},
                std::optional<Clock::Duration> hold = std::nullopt) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) {
        ++stats_.refused_shutdown;
        return Admission::kShutdown;
      }
      if (!key.empty()) {
        auto waiting = by_key_.find(key);
        if (waiting != by_key_.end()) {
          Entry& e = *waiting->second;
          e.item = std::move(item);
          ++stats_.coalesced;
          if (hold.has_value()) ++stats_.held;
          if (!hold.has_value()) {
            e.held = false;  // the newer content is not expected to change: send it now
          } else if (e.held) {
            e.held_until = std::min(e.held_until, clock_->Now() + *hold);
          }
          if (!e.held) ready_.notify_all();  // it may have been held until now
          return Admission::kCoalesced;
        }
      }
      if (options_.capacity > 0 && queue_.size() >= options_.capacity) {
        ++stats_.refused_full;
        return Admission::kFull;
      }
      Entry e{key, std::move(item), min_interval};
      if (hold.has_value() && !key.empty()) {
        e.held = true;
        e.held_until = clock_->Now() + *hold;
      }
      queue_.push_back(std::move(e));
      if (!key.empty()) by_key_.emplace(std::move(key), std::prev(queue_.end()));
      ++stats_.enqueued;
      if (hold.has_value()) ++stats_.held;
    }
    ready_.notify_one();
    return Admission::kQueued;
  }

  // The first entry that may be handled now, or queue_.end(); `*wake` is then the earliest
  // time an entry held by an interval or a hold becomes ready (TimePoint::max() if none:
  // wait for a notification). Requires mu_.
  typename std::list<Entry>::iterator NextReady(Clock::TimePoint now, Clock::TimePoint* wake) {
    *wake = Clock::TimePoint::max();
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->key.empty()) return it;
      if (in_flight_keys_.count(it->key) != 0) continue;
      if (it->held && !stopping_ && flushing_ == 0 && it->held_until > now) {
        *wake = std::min(*wake, it->held_until);
        continue;
      }
      if (it->min_interval > Clock::Duration::zero() && !stopping_) {
        auto last = last_done_.find(it->key);
        if (last != last_done_.end()) {
          const Clock::TimePoint ready_at = last->second + it->min_interval;
          if (ready_at > now) {
            *wake = std::min(*wake, ready_at);
            continue;
          }
        }
      }
      return it;
    }
    return queue_.end();
  }

  void Work() {
    std::unique_lock<std::mutex> l(mu_);
    while (true) {
      ready_.wait(l, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      Clock::TimePoint wake;
      auto next = NextReady(clock_->Now(), &wake);
      if (next == queue_.end()) {
        // Everything waiting is held: by a key in flight (its end notifies) or an interval.
        if (wake == Clock::TimePoint::max()) {
          ready_.wait(l);
        } else {
          clock_->WaitUntil(l, ready_, wake);
        }
        continue;
      }
      Entry entry = std::move(*next);
      queue_.erase(next);
      if (!entry.key.empty()) {
        by_key_.erase(entry.key);
        in_flight_keys_.insert(entry.key);
      }
      ++in_flight_;
      l.unlock();
      handler_(entry.item);
      l.lock();
      --in_flight_;
      ++stats_.handled;
      if (!entry.key.empty()) {
        in_flight_keys_.erase(entry.key);
        if (entry.min_interval > Clock::Duration::zero()) {
          const Clock::TimePoint now = clock_->Now();
          last_done_[entry.key] = now;
          if (last_done_.size() > 4096) {  // forget keys whose last write is long past
            for (auto it = last_done_.begin(); it != last_done_.end();) {
              it =
                  now - it->second > std::chrono::minutes(1) ? last_done_.erase(it) : std::next(it);
            }
          }
        }
        ready_.notify_all();  // an item of this key may be waiting for another worker
      }
      if (queue_.empty() && in_flight_ == 0) idle_.notify_all();
    }
  }

  const AsyncWriterOptions options_;
  const Handler handler_;
  Clock* const clock_;

  mutable std::mutex mu_;
  std::condition_variable ready_;  // an item waits, or stopping
  std::condition_variable idle_;   // nothing waits or runs
  std::list<Entry> queue_;         // guarded by mu_
  std::unordered_map<std::string, typename std::list<Entry>::iterator> by_key_;  // guarded by mu_
  std::unordered_set<std::string> in_flight_keys_;                               // guarded by mu_
  std::unordered_map<std::string, Clock::TimePoint> last_done_;  // keys with an interval; mu_
  std::size_t in_flight_ = 0;                                    // guarded by mu_
  bool stopping_ = false;                                        // guarded by mu_
  int flushing_ = 0;        // Flush() calls waiting (holds are then ignored); guarded by mu_
  AsyncWriterStats stats_;  // guarded by mu_

  std::mutex join_mu_;  // serializes the joins of concurrent Shutdown() calls
  std::vector<std::thread> workers_;
};

}  // namespace basalt
