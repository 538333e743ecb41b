#pragma once
// Reflector keeps a ReflectorSink in step with one resource on the API server: it LISTs
// (pages of `page_size`), hands the full set to the sink, then WATCHes from the list's
// resourceVersion and hands over every event, in order.
//
//  - Watches ask for bookmarks (allowWatchBookmarks) and a timeoutSeconds drawn at random
//    from [min_watch_timeout, 2 * min_watch_timeout), so that many clients do not reconnect in
//    lockstep. A bookmark only advances the resourceVersion.
//  - When a watch ends (server timeout, connection loss, an ERROR event other than 410), the
//    reflector watches again from the last resourceVersion it saw, so no event is lost.
//  - A line that is not a watch event (client::IsMalformedWatchEvent: not JSON, no type or
//    object) is logged with the line quoted, and the reflector backs off and relists: the
//    stream can no longer be trusted. The informer keeps running.
//    Failures, and watches that end without delivering anything, wait first with exponential
//    backoff (initial_backoff doubling up to max_backoff, with jitter) on the injected Clock;
//    a watch that delivered events resets the backoff.
//  - kOutOfRange (410 Gone, "too old resource version", e.g. after an etcd compaction) means
//    events were lost: the reflector relists at once and the sink's Replace reconciles.
//  - Lists are consistent reads (no resourceVersion: served from etcd, not the watch cache),
//    so a relist never goes back in time. client-go first tries the watch cache
//    (resourceVersion=0 / NotOlderThan); Basalt pays one etcd read per relist for simplicity.
//  - With resync_period > 0, a second thread calls OnResync() every period.
//  - An object the Transform rejects is logged and skipped (a deleted one is still deleted).
//
// Thread-safety: Run() blocks the calling thread until Stop(), which may be called from any
// thread (also before Run()). Sink calls come from the Run() thread, except OnResync() which
// comes from the resync thread: the sink serialises them. Ownership: the Client, the sink and
// the Clock are borrowed and must outlive Run().

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/client/client.h"
#include "common/client/resource.h"
#include "common/informer/object.h"
#include "common/util/clock.h"

namespace basalt::informer {

// What to list and watch.
// Every member has a default, so designated initializers may name only some
// (-Wmissing-field-initializers): {.resource = client::Pods()}.
struct ListWatchSource {
  client::ResourceRef resource = {};
  std::string namespace_name = {};  // "" = all namespaces (or a cluster-scoped resource)
  std::string label_selector = {};
  std::string field_selector = {};
};

struct ReflectorOptions {
  int64_t page_size = 500;
  std::chrono::seconds min_watch_timeout{300};
  Clock::Duration initial_backoff = std::chrono::milliseconds(800);
  Clock::Duration max_backoff = std::chrono::seconds(30);
  // Each wait lasts backoff * (1 + jitter * random()); 0 makes waits exact.
  double jitter = 1.0;
  // Re-deliver the whole cache every period (0 = never).
  Clock::Duration resync_period{0};
  Clock* clock = nullptr;  // nullptr: Clock::Real()
  // Uniform in [0, 1); nullptr: a Mersenne twister seeded from std::random_device.
  std::function<double()> random = {};
  // Called on the Run() thread before each backoff wait (metrics, tests).
  std::function<void(Clock::Duration wait)> on_backoff = {};
};

// Receives what the reflector learns. `resource_version` is the version the cache is at once
// the call is applied.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // The complete current set of objects (after a list).
  virtual void OnReplace(std::vector<Object> objects, std::string resource_version) = 0;
  // ADDED or MODIFIED.
  virtual void OnUpsert(Object obj, std::string resource_version) = 0;
  // DELETED; `final_state` is null when the Transform rejected the final state.
  virtual void OnDelete(std::string key, Object final_state, std::string resource_version) = 0;
  virtual void OnBookmark(std::string resource_version) = 0;
  virtual void OnResync() = 0;
};

struct ReflectorStats {
  int64_t lists = 0;  // successful lists (the first one included)
  int64_t list_failures = 0;
  int64_t watches = 0;         // watch requests started
  int64_t expired = 0;         // relists forced by kOutOfRange (410)
  int64_t watch_failures = 0;  // watches that ended with an error other than kOutOfRange
  int64_t malformed = 0;       // of those, ended by a line that is not a watch event (relist)
  int64_t events = 0;          // watch events delivered (bookmarks included)
  int64_t rejected = 0;        // objects the Transform rejected
  int64_t backoffs = 0;
  std::string resource_version = {};
};

class Reflector {
 public:
  Reflector(client::Client* client, ListWatchSource source, Transform transform,
            ReflectorSink* sink, ReflectorOptions options = {});
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;
  ~Reflector();

  // Lists and watches until Stop(). An in-flight LIST page is finished first (the Client
  // cannot cancel it); a watch is cancelled at once.
  void Run();
  void Stop();

  ReflectorStats stats() const;
  const ListWatchSource& source() const { return source_; }

 private:
  struct WatchOutcome {
    absl::Status status;
    int64_t events = 0;
  };
  absl::Status List();
  WatchOutcome Watch();
  // Waits the current backoff and grows it. False if stopped meanwhile.
  bool Backoff();
  // Waits until `deadline` on the clock; false if stopped first.
  bool WaitUntil(Clock::TimePoint deadline);
  void ResyncLoop(Clock::TimePoint first);
  bool stopped() const { return stopped_.load(); }
  std::chrono::seconds NextWatchTimeout();

  client::Client* const client_;
  const ListWatchSource source_;
  const Transform transform_;
  ReflectorSink* const sink_;
  const ReflectorOptions options_;
  Clock* const clock_;
  std::function<double()> random_;  // Run() thread only

  std::atomic<bool> stopped_{false};
  // std::mutex rather than absl::Mutex: see the note in store.h.
  mutable std::mutex mu_;
  client::CancelToken* watch_cancel_ = nullptr;  // guarded by mu_
  ReflectorStats stats_;                         // guarded by mu_
  // Backoff and resync waits.
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::string resource_version_;  // Run() thread only
  Clock::Duration next_backoff_;  // Run() thread only
};

}  // namespace basalt::informer
