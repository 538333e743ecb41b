#include "common/informer/shared_informer.h"

#include <algorithm>

#include "common/util/log.h"

namespace basalt::informer {

class SharedInformer::DispatchLock {
 public:
  explicit DispatchLock(SharedInformer* informer) : informer_(informer) {
    if (informer_->dispatch_thread_.load() == std::this_thread::get_id()) return;
    informer_->dispatch_mu_.lock();
    informer_->dispatch_thread_.store(std::this_thread::get_id());
    owner_ = true;
  }
  ~DispatchLock() {
    if (!owner_) return;
    informer_->dispatch_thread_.store(std::thread::id());
    informer_->dispatch_mu_.unlock();
  }
  DispatchLock(const DispatchLock&) = delete;
  DispatchLock& operator=(const DispatchLock&) = delete;

 private:
  SharedInformer* informer_;
  bool owner_ = false;
};

SharedInformer::SharedInformer(client::Client* client, InformerOptions options)
    : options_(std::move(options)),
      store_(options_.indexers),
      reflector_(client, options_.source, options_.transform, this, options_.reflector) {}

SharedInformer::~SharedInformer() { Stop(); }

HandlerId SharedInformer::AddEventHandler(EventHandler handler) {
  auto h = std::make_shared<const EventHandler>(std::move(handler));
  DispatchLock lock(this);
  if (h->on_add) {
    std::vector<Object> current = store_.List();
    std::sort(current.begin(), current.end(),
              [](const Object& a, const Object& b) { return a.key() < b.key(); });
    for (const Object& obj : current) h->on_add(obj);
  }
  HandlerId id = next_id_++;
  handlers_.push_back(Registered{id, std::move(h)});
  return id;
}

void SharedInformer::RemoveEventHandler(HandlerId id) {
  DispatchLock lock(this);
  handlers_.erase(std::remove_if(handlers_.begin(), handlers_.end(),
                                 [id](const Registered& r) { return r.id == id; }),
                  handlers_.end());
}

std::vector<SharedInformer::Registered> SharedInformer::HandlersLocked() const { return handlers_; }

void SharedInformer::Start() {
  std::lock_guard<std::mutex> l(thread_mu_);
  if (started_ || stopped_) return;
  started_ = true;
  thread_ = std::thread([this] { reflector_.Run(); });
}

void SharedInformer::Run(const std::stop_token& stop) {
  Start();
  {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, stop, [] { return false; });
  }
  Stop();
}

void SharedInformer::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> l(thread_mu_);
    if (stopped_) return;
    stopped_ = true;
    t = std::move(thread_);
  }
  reflector_.Stop();
  if (t.joinable()) t.join();
  // Wake WaitForCacheSync callers so they can observe the stop.
  std::lock_guard<std::mutex> l(sync_mu_);
  sync_cv_.notify_all();
}

bool SharedInformer::started() const {
  std::lock_guard<std::mutex> l(thread_mu_);
  return started_;
}

Clock* SharedInformer::clock() const {
  return options_.reflector.clock != nullptr ? options_.reflector.clock : Clock::Real();
}

bool SharedInformer::WaitForCacheSync(const std::stop_token& stop,
                                      std::chrono::milliseconds timeout) const {
  Clock& clock = *this->clock();
  const Clock::TimePoint now = clock.Now();
  const Clock::TimePoint deadline =
      timeout >= Clock::TimePoint::max() - now
          ? Clock::TimePoint::max()
          : now + std::chrono::duration_cast<Clock::Duration>(timeout);
  // Declared before the lock: destroyed after it, so a concurrent callback (it takes sync_mu_)
  // can finish.
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> l(sync_mu_);
    sync_cv_.notify_all();
  });
  std::unique_lock<std::mutex> l(sync_mu_);
  while (!synced_.load() && !stop.stop_requested() && clock.Now() < deadline) {
    clock.WaitUntil(l, sync_cv_, deadline);
  }
  return synced_.load();
}

void SharedInformer::OnReplace(std::vector<Object> objects, std::string resource_version) {
  DispatchLock lock(this);
  std::vector<StoreChange> changes =
      store_.Replace(std::move(objects), std::move(resource_version));
  std::vector<Registered> handlers = HandlersLocked();
  for (const StoreChange& c : changes) {
    for (const Registered& r : handlers) {
      const EventHandler& h = *r.handler;
      if (!c.old) {
        if (h.on_add) h.on_add(c.current);
      } else if (!c.current) {
        if (h.on_delete) h.on_delete(c.old, /*final_state_unknown=*/true);
      } else if (h.on_update) {
        h.on_update(c.old, c.current);
      }
    }
  }
  if (!synced_.load()) {
    BASALT_LOG_INFO("Informer synced", "resource", options_.source.resource.resource, "namespace",
                    options_.source.namespace_name, "items", store_.size());
    std::lock_guard<std::mutex> l(sync_mu_);
    synced_.store(true);
    sync_cv_.notify_all();
  }
}

void SharedInformer::OnUpsert(Object obj, std::string resource_version) {
  DispatchLock lock(this);
  Object old = store_.Upsert(obj);
  store_.SetResourceVersion(std::move(resource_version));
  for (const Registered& r : HandlersLocked()) {
    const EventHandler& h = *r.handler;
    if (old) {
      if (h.on_update) h.on_update(old, obj);
    } else if (h.on_add) {
      h.on_add(obj);
    }
  }
}

void SharedInformer::OnDelete(std::string key, Object final_state, std::string resource_version) {
  DispatchLock lock(this);
  Object old = store_.Delete(key);
  store_.SetResourceVersion(std::move(resource_version));
  const bool unknown = !final_state;
  const Object& delivered = unknown ? old : final_state;
  if (!delivered) return;  // neither cached nor decodable: nothing to tell
  for (const Registered& r : HandlersLocked()) {
    if (r.handler->on_delete) r.handler->on_delete(delivered, unknown);
  }
}

void SharedInformer::OnBookmark(std::string resource_version) {
  store_.SetResourceVersion(std::move(resource_version));
}

void SharedInformer::OnResync() {
  DispatchLock lock(this);
  std::vector<Registered> handlers = HandlersLocked();
  if (handlers.empty()) return;
  std::vector<Object> current = store_.List();
  std::sort(current.begin(), current.end(),
            [](const Object& a, const Object& b) { return a.key() < b.key(); });
  for (const Object& obj : current) {
    for (const Registered& r : handlers) {
      if (r.handler->on_update) r.handler->on_update(obj, obj);
    }
  }
}

bool WaitForCacheSync(const std::stop_token& stop, std::chrono::milliseconds timeout,
                      const std::vector<const SharedInformer*>& informers) {
  if (informers.empty()) return true;
  Clock& clock = *informers.front()->clock();
  const auto deadline = clock.Now() + timeout;
  for (const SharedInformer* informer : informers) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now());
    if (!informer->WaitForCacheSync(stop, std::max(left, std::chrono::milliseconds(0)))) {
      return false;
    }
  }
  return true;
}

}  // namespace basalt::informer
