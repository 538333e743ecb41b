#include "common/informer/reflector.h"

#include <algorithm>
#include <random>
#include <thread>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::informer {

namespace {

// A watch that ends cleanly without delivering anything this soon is treated as a failure, so a
// server (or proxy) that closes streams at once cannot make the reflector spin.
constexpr auto kMinHealthyWatch = std::chrono::seconds(1);

std::string ResourceName(const ListWatchSource& s) {
  std::string name = s.resource.group.empty()
                         ? s.resource.resource
                         : fmt::format("{}.{}", s.resource.resource, s.resource.group);
  if (!s.namespace_name.empty()) name = fmt::format("{} in {}", name, s.namespace_name);
  return name;
}

std::string_view ResourceVersionOf(const json::Value& obj) {
  const json::Value* meta = json::Find(obj, "metadata");
  return meta != nullptr ? json::GetString(*meta, "resourceVersion") : std::string_view();
}

}  // namespace

Reflector::Reflector(client::Client* client, ListWatchSource source, Transform transform,
                     ReflectorSink* sink, ReflectorOptions options)
    : client_(client),
      source_(std::move(source)),
      transform_(std::move(transform)),
      sink_(sink),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      random_(options_.random),
      next_backoff_(options_.initial_backoff) {
  if (!random_) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device()());
    random_ = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
}

Reflector::~Reflector() { Stop(); }

void Reflector::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopped_.store(true);
    if (watch_cancel_ != nullptr) watch_cancel_->Cancel();
  }
  std::lock_guard<std::mutex> l(wait_mu_);
  wait_cv_.notify_all();
}

ReflectorStats Reflector::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

bool Reflector::WaitUntil(Clock::TimePoint deadline) {
  std::unique_lock<std::mutex> l(wait_mu_);
  while (!stopped()) {
    if (clock_->Now() >= deadline) return true;
    clock_->WaitUntil(l, wait_cv_, deadline);
  }
  return false;
}

bool Reflector::Backoff() {
  const double r = std::clamp(random_(), 0.0, 1.0);
  auto wait =
      std::chrono::duration_cast<Clock::Duration>(next_backoff_ * (1.0 + options_.jitter * r));
  next_backoff_ = std::min(next_backoff_ * 2, options_.max_backoff);
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.backoffs;
  }
  BASALT_VLOG(2, "Reflector backing off", "resource", ResourceName(source_), "wait_ms",
              std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
  // The deadline is fixed before the hook runs, so a test that advances a fake clock from the
  // hook's notification cannot race with it.
  const Clock::TimePoint deadline = clock_->Now() + wait;
  if (options_.on_backoff) options_.on_backoff(wait);
  return WaitUntil(deadline);
}

std::chrono::seconds Reflector::NextWatchTimeout() {
  const double r = std::clamp(random_(), 0.0, 1.0);
  auto t = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::duration<double>(options_.min_watch_timeout) * (1.0 + r));
  return std::max(t, std::chrono::seconds(1));
}

absl::Status Reflector::List() {
  client::ListOptions options;
  options.label_selector = source_.label_selector;
  options.field_selector = source_.field_selector;
  options.limit = options_.page_size;
  std::vector<Object> objects;
  std::string resource_version;
  int64_t rejected = 0;
  // Pages are transformed as they arrive, so a large list is never held twice as documents.
  while (true) {
    if (stopped()) return absl::CancelledError("reflector stopped");
    BASALT_ASSIGN_OR_RETURN(client::ObjectList page,
                            client_->List(source_.resource, source_.namespace_name, options));
    // No reserve per page: an exact reserve reallocates on every page (quadratic in pages);
    // push_back grows geometrically.
    for (json::Document& doc : page.items) {
      absl::StatusOr<Object> obj = transform_.Apply(std::move(doc));
      if (!obj.ok()) {
        ++rejected;
        BASALT_LOG_WARNING("Reflector skips an object it cannot decode", "resource",
                           ResourceName(source_), "error", MessageOf(obj.status()));
        continue;
      }
      objects.push_back(*std::move(obj));
    }
    resource_version = std::move(page.resource_version);
    if (page.continue_token.empty()) break;
    options.continue_token = std::move(page.continue_token);
  }
  const size_t count = objects.size();
  resource_version_ = resource_version;
  // Stats first: the sink may hand the replaced objects to handlers at once, and whoever
  // reacts to those events must already see the list counted.
  {
    std::lock_guard<std::mutex> l(mu_);
    ++stats_.lists;
    stats_.rejected += rejected;
    stats_.resource_version = resource_version_;
  }
  sink_->OnReplace(std::move(objects), std::move(resource_version));
  BASALT_VLOG(1, "Reflector listed", "resource", ResourceName(source_), "items", count,
              "resourceVersion", resource_version_);
  return absl::OkStatus();
}

Reflector::WatchOutcome Reflector::Watch() {
  WatchOutcome outcome;
  client::CancelToken cancel;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped()) return outcome;
    watch_cancel_ = &cancel;
    ++stats_.watches;
  }
  client::ListOptions options;
  options.label_selector = source_.label_selector;
  options.field_selector = source_.field_selector;
  options.resource_version = resource_version_;
  options.allow_watch_bookmarks = true;
  options.timeout_seconds = NextWatchTimeout().count();

  int64_t rejected = 0;
  auto handler = [&](client::WatchEvent&& event) -> absl::Status {
    ++outcome.events;
    std::string rv(ResourceVersionOf(event.object));
    if (event.type == client::WatchEventType::kBookmark) {
      if (!rv.empty()) {
        resource_version_ = rv;
        sink_->OnBookmark(std::move(rv));
      }
      return absl::OkStatus();
    }
    if (!rv.empty()) resource_version_ = rv;
    if (event.type == client::WatchEventType::kDeleted) {
      absl::StatusOr<std::string> key = KeyOf(event.object);
      if (!key.ok()) {
        ++rejected;
        BASALT_LOG_WARNING("Reflector skips a deletion without a name", "resource",
                           ResourceName(source_));
        return absl::OkStatus();
      }
      absl::StatusOr<Object> obj = transform_.Apply(std::move(event.object));
      if (!obj.ok()) {
        ++rejected;
        BASALT_LOG_WARNING("Reflector cannot decode a deleted object's final state", "resource",
                           ResourceName(source_), "error", MessageOf(obj.status()));
      }
      sink_->OnDelete(*std::move(key), obj.ok() ? *std::move(obj) : Object(), resource_version_);
      return absl::OkStatus();
    }
    absl::StatusOr<Object> obj = transform_.Apply(std::move(event.object));
    if (!obj.ok()) {
      ++rejected;
      BASALT_LOG_WARNING("Reflector skips an object it cannot decode", "resource",
                         ResourceName(source_), "error", MessageOf(obj.status()));
      return absl::OkStatus();
    }
    sink_->OnUpsert(*std::move(obj), resource_version_);
    return absl::OkStatus();
  };
  outcome.status =
      client_->Watch(source_.resource, source_.namespace_name, options, handler, &cancel);
  std::lock_guard<std::mutex> l(mu_);
  watch_cancel_ = nullptr;
  stats_.events += outcome.events;
  stats_.rejected += rejected;
  stats_.resource_version = resource_version_;
  return outcome;
}

void Reflector::Run() {
  std::thread resync;
  if (options_.resync_period > Clock::Duration::zero()) {
    // The first deadline is fixed before the thread starts, so clock moves right after Run()
    // begins count.
    const Clock::TimePoint first = clock_->Now() + options_.resync_period;
    resync = std::thread([this, first] { ResyncLoop(first); });
  }
  bool need_list = true;
  while (!stopped()) {
    if (need_list) {
      absl::Status s = List();
      if (stopped()) break;
      if (!s.ok()) {
        {
          std::lock_guard<std::mutex> l(mu_);
          ++stats_.list_failures;
        }
        BASALT_LOG_WARNING("Reflector list failed", "resource", ResourceName(source_), "error",
                           MessageOf(s));
        if (!Backoff()) break;
        continue;
      }
      need_list = false;
    }
    const Clock::TimePoint started = clock_->Now();
    WatchOutcome w = Watch();
    if (stopped()) break;
    if (w.status.ok()) {
      if (w.events > 0 || clock_->Now() - started >= kMinHealthyWatch) {
        // The server ended the watch (timeoutSeconds): resume from the last resourceVersion.
        next_backoff_ = options_.initial_backoff;
        continue;
      }
      BASALT_VLOG(2, "Reflector watch closed without events", "resource", ResourceName(source_));
    } else if (w.status.code() == absl::StatusCode::kOutOfRange) {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.expired;
      }
      BASALT_LOG_INFO("Reflector watch expired, relisting", "resource", ResourceName(source_),
                      "resourceVersion", resource_version_, "reason", MessageOf(w.status));
      if (w.events > 0) next_backoff_ = options_.initial_backoff;
      need_list = true;
      continue;
    } else if (client::IsMalformedWatchEvent(w.status)) {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.watch_failures;
        ++stats_.malformed;
      }
      // The server (or something between) sent a line that is not a watch event. Whatever it
      // was, the cache may now miss a change, so the reflector backs off and relists (as
      // client-go does after a decode error). The backoff is not reset by events that came
      // before the bad line, so a stream that keeps failing this way slows down to max_backoff.
      BASALT_LOG_WARNING("Reflector got a watch line it cannot read, relisting after a backoff",
                         "resource", ResourceName(source_), "resourceVersion", resource_version_,
                         "error", MessageOf(w.status));
      need_list = true;
    } else {
      {
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.watch_failures;
      }
      // Connection loss, timeouts, an ERROR event other than 410: the stream is dropped and
      // resumed from the last resourceVersion that was fully applied, so nothing is skipped.
      BASALT_LOG_WARNING("Reflector watch ended with an error, watching again", "resource",
                         ResourceName(source_), "resourceVersion", resource_version_, "error",
                         MessageOf(w.status));
      if (w.events > 0) next_backoff_ = options_.initial_backoff;
    }
    if (!Backoff()) break;
  }
  if (resync.joinable()) resync.join();
}

void Reflector::ResyncLoop(Clock::TimePoint next) {
  while (WaitUntil(next)) {
    sink_->OnResync();
    next += options_.resync_period;
    // After a stall of more than a period, skip the missed resyncs rather than firing them
    // back to back.
    const Clock::TimePoint now = clock_->Now();
    if (now - next >= options_.resync_period) next = now + options_.resync_period;
  }
}

}  // namespace basalt::informer
