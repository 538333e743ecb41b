#include "common/ctrlkit/work_queue.h"

#include "common/util/log.h"

namespace basalt::ctrlkit {
namespace {

double Seconds(Clock::Duration d) { return std::chrono::duration<double>(d).count(); }

std::optional<WorkQueueMetrics::Series> SeriesFor(WorkQueueMetrics* metrics,
                                                  const std::string& name) {
  if (metrics == nullptr) return std::nullopt;
  return metrics->ForQueue(name);
}

}  // namespace

WorkQueue::WorkQueue(WorkQueueOptions options)
    : name_(std::move(options.name)),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      rate_limiter_(options.rate_limiter != nullptr ? std::move(options.rate_limiter)
                                                    : DefaultControllerRateLimiter(clock_)),
      metrics_(SeriesFor(options.metrics, name_)) {
  delay_thread_ = std::thread([this] { DelayLoop(); });
}

WorkQueue::~WorkQueue() {
  ShutDown();
  delay_thread_.join();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  AddLocked(key);
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (!dirty_.insert(key).second) return;  // Already waiting (or re-added while in flight).
  if (metrics_) {
    metrics_->adds->Increment();
    added_at_.emplace(key, clock_->Now());
  }
  // An in-flight key goes back into queue_ on Done(), never to a second worker now.
  if (processing_.count(key) != 0) return;
  queue_.push_back(key);
  UpdateDepthLocked();
  cond_.notify_one();
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> l(mu_);
  cond_.wait(l, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return std::nullopt;  // Shut down and drained.
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  UpdateDepthLocked();
  if (metrics_) {
    const Clock::TimePoint now = clock_->Now();
    if (auto it = added_at_.find(key); it != added_at_.end()) {
      metrics_->queue_duration->Observe(Seconds(now - it->second));
      added_at_.erase(it);
    }
    started_at_[key] = now;
  }
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  if (processing_.erase(key) == 0) {
    BASALT_LOG_WARNING("WorkQueue::Done for a key that is not in flight", "queue", name_, "key",
                       key);
    return;
  }
  if (metrics_) {
    if (auto it = started_at_.find(key); it != started_at_.end()) {
      metrics_->work_duration->Observe(Seconds(clock_->Now() - it->second));
      started_at_.erase(it);
    }
  }
  if (dirty_.count(key) != 0) {
    // Re-added while in flight: queued even during shutdown, as the Add was accepted.
    queue_.push_back(key);
    UpdateDepthLocked();
    cond_.notify_one();
  } else if (drain_ && processing_.empty()) {
    cond_.notify_all();
  }
}

void WorkQueue::AddAfter(const std::string& key, Clock::Duration delay) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  if (delay <= Clock::Duration::zero()) {
    AddLocked(key);
    return;
  }
  const Clock::TimePoint ready_at = clock_->Now() + delay;
  auto [it, inserted] = waiting_ready_at_.try_emplace(key, ready_at);
  if (!inserted) {
    if (it->second <= ready_at) return;  // Already due earlier.
    waiting_.erase({it->second, key});
    it->second = ready_at;
  }
  waiting_.emplace(ready_at, key);
  // Only a new earliest deadline changes when the delay thread must wake.
  if (waiting_.begin()->second == key) delay_cond_.notify_one();
}

void WorkQueue::AddRateLimited(const std::string& key) {
  const Clock::Duration delay = rate_limiter_->When(key);
  if (metrics_) metrics_->retries->Increment();
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) { rate_limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return rate_limiter_->NumRequeues(key); }

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  shutting_down_ = true;
  waiting_.clear();
  waiting_ready_at_.clear();
  cond_.notify_all();
  delay_cond_.notify_one();
}

void WorkQueue::ShutDownWithDrain() {
  {
    std::lock_guard<std::mutex> l(mu_);
    drain_ = true;
  }
  ShutDown();
  std::unique_lock<std::mutex> l(mu_);
  // On the Clock (no deadline) rather than a bare wait, so that a test with FakeClock can
  // block until the drain is waiting (FakeClock::WaitForTimerBy) instead of polling.
  while (!processing_.empty()) clock_->WaitUntil(l, cond_, Clock::TimePoint::max());
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard<std::mutex> l(mu_);
  return shutting_down_;
}

std::size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> l(mu_);
  return queue_.size();
}

void WorkQueue::UpdateDepthLocked() {
  if (metrics_) metrics_->depth->Set(static_cast<double>(queue_.size()));
}

void WorkQueue::DelayLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!shutting_down_) {
    const Clock::TimePoint now = clock_->Now();
    while (!waiting_.empty() && waiting_.begin()->first <= now) {
      std::string key = waiting_.begin()->second;
      waiting_.erase(waiting_.begin());
      waiting_ready_at_.erase(key);
      AddLocked(key);
    }
    if (waiting_.empty()) {
      delay_cond_.wait(l);
    } else {
      clock_->WaitUntil(l, delay_cond_, waiting_.begin()->first);
    }
  }
}

}  // namespace basalt::ctrlkit
