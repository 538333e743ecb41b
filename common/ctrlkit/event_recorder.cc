#include "common/ctrlkit/event_recorder.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "common/api/time.h"
#include "common/client/resource.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::ctrlkit {
namespace {

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "unknown";
  return host;
}

// Identifies the involved object for the spam filter.
std::string ObjectKey(const api::ObjectReference& o) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", o.api_version, o.kind, o.namespace_name, o.name,
                     o.uid);
}

}  // namespace

std::string_view EventTypeName(EventType type) {
  return type == EventType::kWarning ? "Warning" : "Normal";
}

EventRecorder::EventRecorder(client::Client* client, EventRecorderOptions options)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      instance_(options_.instance.empty() ? HostName() : options_.instance),
      writer_(AsyncWriterOptions{.name = "events",
                                 .workers = 1,
                                 .capacity = std::max<std::size_t>(1, options_.queue_capacity)},
              [this](Pending& event) { Send(event); }) {}

EventRecorder::~EventRecorder() { Shutdown(); }

void EventRecorder::Event(const api::Object& object, EventType type, std::string_view reason,
                          std::string_view message) {
  Event(api::ReferenceTo(object), type, reason, message);
}

void EventRecorder::Event(const api::ObjectReference& object, EventType type,
                          std::string_view reason, std::string_view message) {
  const api::Time time = clock_->WallNow();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (writer_.stopped()) {
      ++stats_.dropped_shutdown;
      return;
    }
    if (object.name.empty()) {  // No valid Event name "<object>.<suffix>" exists.
      ++stats_.failed;
      BASALT_LOG_WARNING("Event about an object without a name dropped", "kind", object.kind,
                         "reason", reason);
      return;
    }
    if (!AllowLocked(ObjectKey(object))) {
      ++stats_.dropped_rate_limited;
      BASALT_VLOG(4, "Event dropped by the per-object rate limit", "object", object.name, "reason",
                  reason);
      return;
    }
  }
  const Admission admitted =
      writer_.Enqueue(Pending{object, type, std::string(reason), std::string(message), time});
  if (admitted == Admission::kQueued) return;
  std::lock_guard<std::mutex> l(mu_);
  if (admitted == Admission::kFull) {
    ++stats_.dropped_queue_full;
    BASALT_VLOG(4, "Event dropped: queue full", "object", object.name, "reason", reason);
  } else {
    ++stats_.dropped_shutdown;
  }
}

bool EventRecorder::AllowLocked(const std::string& object_key) {
  const Clock::TimePoint now = clock_->Now();
  const double burst = std::max(1, options_.rate_limit_burst);
  auto it = buckets_.find(object_key);
  if (it == buckets_.end()) {
    bucket_lru_.push_front(object_key);
    it = buckets_.emplace(object_key, Bucket{burst, now, bucket_lru_.begin()}).first;
    while (buckets_.size() > std::max<std::size_t>(1, options_.rate_limit_cache_size)) {
      buckets_.erase(bucket_lru_.back());
      bucket_lru_.pop_back();
    }
  } else {
    bucket_lru_.splice(bucket_lru_.begin(), bucket_lru_, it->second.lru);
  }
  Bucket& b = it->second;
  if (options_.rate_limit_refill > Clock::Duration::zero() && now > b.last) {
    const double gained = std::chrono::duration<double>(now - b.last).count() /
                          std::chrono::duration<double>(options_.rate_limit_refill).count();
    b.tokens = std::min(burst, b.tokens + gained);
  }
  b.last = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

std::string EventRecorder::UniqueSuffix() {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock_->WallNow().time_since_epoch())
          .count();
  // Strictly increasing even when the wall clock stands still (FakeClock) or steps back.
  last_suffix_ = std::max(static_cast<uint64_t>(std::max<int64_t>(ns, 0)), last_suffix_ + 1);
  return fmt::format("{:x}", last_suffix_);
}

void EventRecorder::Send(const Pending& e) {
  const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", ObjectKey(e.object),
                                      EventTypeName(e.type), e.reason, e.message);
  const Clock::TimePoint now = clock_->Now();
  auto it = sent_.find(key);
  if (it != sent_.end() && now - it->second.last_seen <= options_.aggregation_window) {
    Sent& sent = it->second;
    const int32_t count = sent.count + 1;
    const std::string patch =
        fmt::format(R"({{"count":{},"lastTimestamp":"{}"}})", count, api::FormatRfc3339(e.time));
    absl::StatusOr<json::Document> patched = client_->Patch(
        client::Events(), sent.namespace_name, sent.name, client::PatchType::kMerge, patch);
    if (patched.ok()) {
      sent.count = count;
      sent.last_seen = now;
      sent_lru_.splice(sent_lru_.begin(), sent_lru_, sent.lru);
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.aggregated;
      return;
    }
    if (!absl::IsNotFound(patched.status())) {
      BASALT_LOG_WARNING("Could not update Event", "event",
                         fmt::format("{}/{}", sent.namespace_name, sent.name), "error",
                         MessageOf(patched.status()));
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.failed;
      return;
    }
    // The Event expired (the API server's event TTL) or was deleted: start a new one.
    sent_lru_.erase(sent.lru);
    sent_.erase(it);
    it = sent_.end();
  } else if (it != sent_.end()) {
    sent_lru_.erase(it->second.lru);
    sent_.erase(it);
    it = sent_.end();
  }

  api::EventFields fields;
  fields.involved_object = e.object;
  fields.type = std::string(EventTypeName(e.type));
  fields.reason = e.reason;
  fields.message = e.message;
  fields.source_component = options_.component;
  fields.source_host = instance_;
  fields.reporting_component = options_.component;
  fields.reporting_instance = instance_;
  fields.count = 1;
  fields.first_timestamp = e.time;
  fields.last_timestamp = e.time;
  api::Event event = api::Event::Make(fields, UniqueSuffix());
  const std::string ns(event.namespace_name());
  const std::string name(event.name());
  absl::StatusOr<json::Document> created = client_->Create(client::Events(), ns, event.ToJson());
  if (!created.ok()) {
    BASALT_LOG_WARNING("Could not create Event", "event", fmt::format("{}/{}", ns, name), "reason",
                       e.reason, "error", MessageOf(created.status()));
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.failed;
    return;
  }
  sent_lru_.push_front(key);
  sent_.emplace(key, Sent{ns, name, 1, now, sent_lru_.begin()});
  while (sent_.size() > std::max<std::size_t>(1, options_.aggregation_cache_size)) {
    sent_.erase(sent_lru_.back());
    sent_lru_.pop_back();
  }
  std::lock_guard<std::mutex> l(mu_);
  ++stats_.created;
}

void EventRecorder::Flush() { writer_.Flush(); }

void EventRecorder::Shutdown() { writer_.Shutdown(); }

EventRecorderStats EventRecorder::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

}  // namespace basalt::ctrlkit
