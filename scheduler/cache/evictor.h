#pragma once
// ApiEvictor deletes the victims chosen by reclaim (and preempt, once it exists): Evict()
// returns at once; a worker thread records a Normal `Evict` event on the victim's PodGroup and a
// Warning `Evict` event on the pod ("Pod is evicted, because of <reason>"), then DELETEs the
// pod with its UID as precondition and the default grace period. The informer then reports the
// pod terminating (Releasing) and gone, which frees its node in the ClusterState. The work
// goes through an AsyncWriter (FIFO, one thread).
//
// Thread-safety: Evict() from the scheduling thread; Shutdown() from any thread. Ownership:
// borrows the Client, ClusterState and EventRecorder.

#include <string>

#include "common/client/client.h"
#include "common/controller/event_recorder.h"
#include "common/util/async_writer.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

class ApiEvictor : public Evictor {
 public:
  ApiEvictor(client::Client* client, ClusterState* state, controller::EventRecorder* recorder);
  ~ApiEvictor() override;  // Shutdown()
  ApiEvictor(const ApiEvictor&) = delete;
  ApiEvictor& operator=(const ApiEvictor&) = delete;

  void Evict(const TaskInfo& task, std::string_view reason) override;
  // Sends the evictions already queued, then stops. Idempotent.
  void Shutdown();

 private:
  struct Item {
    std::string uid;
    std::string namespace_name;
    std::string name;
    std::string job_id;
    std::string reason;
  };
  void Send(const Item& item);

  client::Client* const client_;
  ClusterState* const state_;
  controller::EventRecorder* const recorder_;
  AsyncWriter<Item> writer_;  // last: its worker uses the members above
};

}  // namespace basalt::sched::cache
