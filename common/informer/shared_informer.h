#pragma once
// SharedInformer keeps a Store of one resource in step with the API server (through a
// Reflector on its own thread) and tells registered handlers what changed. One informer (one
// watch) serves any number of handlers; SharedInformerFactory shares informers across the
// controllers of a process.
//
//   SharedInformer pods(client, {.source = {.resource = client::Pods()}});
//   pods.AddEventHandler({.on_add = [&](const Object& o) { queue.Add(o.key()); }});
//   pods.Start();
//   if (!pods.WaitForCacheSync(stop, std::chrono::minutes(1))) return ...;
//   informer::Object p = pods.store().Get("ns/p1");
//
// Delivery: every change reaches the handlers in the order the informer applied it to the
// store, handler by handler in registration order, on the informer's thread (so a handler
// must be quick: enqueue a key, do not call the API server). When a handler runs, the store
// already holds the new state. A watch ADDED for a known key is delivered as an update and a
// MODIFIED for an unknown key as an add. A relist delivers adds, updates (also for unchanged
// objects) and, for objects that vanished while the watch was down, deletes with
// final_state_unknown = true carrying their last known state (a tombstone). A resync delivers
// on_update(obj, obj) for every cached object.
//
// Handlers added after Start() first receive an on_add for every cached object, then the live
// stream, with nothing missed or doubled. AddEventHandler/RemoveEventHandler may be called from
// any thread, including from inside a handler.
//
// Thread-safety: all methods are thread-safe. Ownership: borrows the Client (which must
// outlive the informer); owns its store, reflector and thread. Start() once; Stop() (also run
// by the destructor) cannot be undone.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/client/client.h"
#include "common/informer/object.h"
#include "common/informer/reflector.h"
#include "common/informer/store.h"
#include "common/util/clock.h"

namespace basalt::informer {

// Any member may be empty.
struct EventHandler {
  std::function<void(const Object& obj)> on_add = {};
  std::function<void(const Object& old_obj, const Object& new_obj)> on_update = {};
  // `obj` is the final state from the watch, or, with final_state_unknown, the last state the
  // cache knew (the object was deleted while the watch was down, or its final state could not
  // be decoded).
  std::function<void(const Object& obj, bool final_state_unknown)> on_delete = {};
};

using HandlerId = int64_t;

struct InformerOptions {
  ListWatchSource source = {};
  Transform transform = {};  // default: whole documents
  Indexers indexers = {};    // besides the namespace index
  ReflectorOptions reflector = {};
};

class SharedInformer : private ReflectorSink {
 public:
  SharedInformer(client::Client* client, InformerOptions options);
  SharedInformer(const SharedInformer&) = delete;
  SharedInformer& operator=(const SharedInformer&) = delete;
  ~SharedInformer() override;

  HandlerId AddEventHandler(EventHandler handler);
  // Stops delivery to `id`. When called from another thread while that handler runs, the
  // current call finishes first.
  void RemoveEventHandler(HandlerId id);
  // See Store::AddIndexers.
  absl::Status AddIndexers(Indexers indexers) { return store_.AddIndexers(std::move(indexers)); }

  // Starts the informer's thread (list, then watch). Idempotent.
  void Start();
  // Start(), then blocks until `stop` is requested, then Stop(): client-go's Run(stopCh).
  void Run(const std::stop_token& stop);
  // Stops watching and joins the thread. Idempotent; the store keeps its last contents. Must
  // not be called from a handler (it would join the thread the handler runs on).
  void Stop();
  bool started() const;

  // True once the first list has been applied and delivered to the handlers.
  bool HasSynced() const { return synced_.load(); }
  // Waits until HasSynced(), `timeout` passes or `stop` is requested. Returns HasSynced().
  // The timeout runs on the reflector's clock (options.reflector.clock, else Clock::Real()):
  // with a FakeClock it passes when the test advances the clock.
  bool WaitForCacheSync(const std::stop_token& stop, std::chrono::milliseconds timeout) const;
  // The clock the informer waits on (its reflector's).
  Clock* clock() const;

  const Store& store() const { return store_; }
  // The resourceVersion of the last list, event or bookmark applied.
  std::string LastSyncResourceVersion() const { return store_.resource_version(); }
  ReflectorStats stats() const { return reflector_.stats(); }
  const InformerOptions& options() const { return options_; }

 private:
  struct Registered {
    HandlerId id;
    std::shared_ptr<const EventHandler> handler;
  };

  // ReflectorSink (called on the informer thread, or the resync thread).
  void OnReplace(std::vector<Object> objects, std::string resource_version) override;
  void OnUpsert(Object obj, std::string resource_version) override;
  void OnDelete(std::string key, Object final_state, std::string resource_version) override;
  void OnBookmark(std::string resource_version) override;
  void OnResync() override;

  // Takes dispatch_mu_ unless the calling thread already holds it (re-entry from a handler).
  class DispatchLock;
  // Requires dispatch_mu_.
  std::vector<Registered> HandlersLocked() const;

  const InformerOptions options_;
  Store store_;
  Reflector reflector_;

  // Held while a change is applied to the store and delivered, so handlers see changes one at
  // a time and registration happens between changes.
  // std::mutex rather than absl::Mutex: see the note in store.h.
  std::mutex dispatch_mu_;
  std::atomic<std::thread::id> dispatch_thread_{};
  std::vector<Registered> handlers_;  // guarded by dispatch_mu_
  HandlerId next_id_ = 1;             // guarded by dispatch_mu_

  std::atomic<bool> synced_{false};
  mutable std::mutex sync_mu_;
  mutable std::condition_variable sync_cv_;

  mutable std::mutex thread_mu_;
  std::thread thread_;    // guarded by thread_mu_
  bool started_ = false;  // guarded by thread_mu_
  bool stopped_ = false;  // guarded by thread_mu_
};

// Waits until every informer HasSynced (see SharedInformer::WaitForCacheSync); false on
// timeout or stop. The timeout runs on the first informer's clock (the informers of one
// process share one).
bool WaitForCacheSync(const std::stop_token& stop, std::chrono::milliseconds timeout,
                      const std::vector<const SharedInformer*>& informers);

}  // namespace basalt::informer
