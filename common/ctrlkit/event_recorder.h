#pragma once
// EventRecorder writes core/v1 Events about objects ("Scheduled", "FailedScheduling",
// "PodGroupPending", ...) the way client-go's record package does, simplified:
//
//  - Event() never blocks on I/O: it puts the event in a bounded queue (an AsyncWriter) that
//    one background thread sends. When the queue is full the event is dropped and counted.
//  - Aggregation: an event equal to one sent within `aggregation_window` (same involved
//    object, type, reason and message) is not created again; the existing Event's count and
//    lastTimestamp are PATCHed instead, so `kubectl describe` shows "(x10 over 3m)" rather
//    than ten lines. (client-go also folds *similar* events with different messages into a
//    "combined from similar events" Event; Basalt keeps messages distinct, since its
//    messages explain a Pending state and each one is actionable.)
//  - Spam filter: a token bucket per involved object (burst 25, then one token per 5 minutes
//    by default) bounds how many events a hot loop can write for one object; the excess is
//    dropped and counted before it takes queue space.
//  - Event names are "<object name>.<unique hex>", in the object's namespace ("default" for
//    cluster-scoped objects such as Queues), with source.component, reportingComponent and
//    reportingInstance set from the options.
//  - Shutdown() sends what is queued, then stops the thread.
//
//   EventRecorder recorder(client.get(), {.component = "vc-scheduler"});
//   recorder.Event(pod, EventType::kWarning, "FailedScheduling", "0/8 nodes are available: ...");
//
// Thread-safety: all methods may be called from any thread. Ownership: the Client and Clock
// must outlive the recorder.

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "common/api/core.h"
#include "common/api/object.h"
#include "common/client/client.h"
#include "common/util/async_writer.h"
#include "common/util/clock.h"

namespace basalt::ctrlkit {

enum class EventType { kNormal, kWarning };
std::string_view EventTypeName(EventType type);  // "Normal", "Warning"

struct EventRecorderOptions {
  // source.component and reportingComponent, e.g. "vc-scheduler". Required.
  std::string component;
  // reportingInstance (and source.host); empty means the host name.
  std::string instance;
  // Events waiting to be sent; more are dropped.
  std::size_t queue_capacity = 1000;
  // Repeats within this window PATCH the existing Event; later ones create a new Event.
  Clock::Duration aggregation_window = std::chrono::minutes(10);
  // Sent Events remembered for aggregation (least recently used dropped first).
  std::size_t aggregation_cache_size = 4096;
  // Per involved object: events allowed at once, and time to regain one.
  int rate_limit_burst = 25;
  Clock::Duration rate_limit_refill = std::chrono::minutes(5);
  // Objects whose token buckets are remembered (least recently used dropped first).
  std::size_t rate_limit_cache_size = 4096;
  // nullptr means Clock::Real().
  Clock* clock = nullptr;
};

struct EventRecorderStats {
  uint64_t created = 0;               // POSTed new Events
  uint64_t aggregated = 0;            // PATCHed repeats (count incremented)
  uint64_t dropped_queue_full = 0;    // Event() found the queue full
  uint64_t dropped_rate_limited = 0;  // the object's token bucket was empty
  uint64_t dropped_shutdown = 0;      // Event() after Shutdown()
  uint64_t failed = 0;  // the API server refused or was unreachable, or no object name
};

class EventRecorder {
 public:
  // Starts the sending thread. `client` must outlive the recorder.
  EventRecorder(client::Client* client, EventRecorderOptions options);
  // Shutdown().
  ~EventRecorder();

  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Records an event about `object` (involvedObject = ReferenceTo(object)). Never blocks on
  // the API server; may drop (see the file comment).
  void Event(const api::Object& object, EventType type, std::string_view reason,
             std::string_view message);
  void Event(const api::ObjectReference& object, EventType type, std::string_view reason,
             std::string_view message);

  // Stops accepting events, sends those already queued, and joins the thread. Idempotent.
  void Shutdown();

  // Blocks until every event queued so far has been handled (sent, aggregated or failed).
  // For tests and orderly hand-overs.
  void Flush();

  EventRecorderStats stats() const;

 private:
  struct Pending {
    api::ObjectReference object;
    EventType type;
    std::string reason;
    std::string message;
    api::Time time;
  };
  struct Sent {
    std::string namespace_name;
    std::string name;
    int32_t count = 0;
    Clock::TimePoint last_seen;
    std::list<std::string>::iterator lru;
  };
  struct Bucket {
    double tokens = 0;
    Clock::TimePoint last;
    std::list<std::string>::iterator lru;
  };

  bool AllowLocked(const std::string& object_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send(const Pending& event);
  std::string UniqueSuffix();

  client::Client* const client_;
  const EventRecorderOptions options_;
  Clock* const clock_;
  const std::string instance_;

  mutable std::mutex mu_;
  EventRecorderStats stats_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> bucket_lru_ ABSL_GUARDED_BY(mu_);  // front: most recent

  // Touched by the sending thread only.
  std::unordered_map<std::string, Sent> sent_;
  std::list<std::string> sent_lru_;  // front: most recent
  uint64_t last_suffix_ = 0;

  AsyncWriter<Pending> writer_;  // last: its thread uses the members above
};

}  // namespace basalt::ctrlkit
