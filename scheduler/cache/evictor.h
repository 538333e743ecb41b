#pragma once
// ApiEvictor deletes the victims chosen by preempt and reclaim. Evict() marks the task
// Releasing in the ClusterState at once (ClusterState::AssumeEvicted), so the next cycle does not
// pick the same victim, or more victims for the same preemptor, before the watch reports the
// pod terminating; then it returns. A worker thread, for each eviction in order:
//   1. records a Warning event `Evicted` on the victim's PodGroup and on the pod, whose message
//      names the action and the preemptor's job, queue and priority (EvictionCause::Message);
//   2. sets the pod condition DisruptionTarget=True, reason PreemptionByScheduler (pods/status,
//      strategic merge), as Volcano and kube-scheduler do;
//   3. DELETEs the pod with its UID as precondition and no grace period override (the pod's
//      own terminationGracePeriodSeconds applies).
// A failed delete (other than NotFound) drops the assumption (ClusterState::ForgetEvicted) so a
// later cycle decides again. The informer then reports the pod terminating (Releasing) and gone,
// which frees its node. The work goes through an AsyncWriter (FIFO, one thread).
//
// Thread-safety: Evict() from the scheduling thread; Shutdown() from any thread. Ownership:
// borrows the Client, ClusterState, EventRecorder and Clock.

#include <string>

#include "common/client/client.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/util/async_writer.h"
#include "common/util/clock.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

struct ApiEvictorOptions {
  // Named in the DisruptionTarget message ("<name>: preempting to accommodate ...").
  std::string scheduler_name = "volcano";
  Clock* clock = nullptr;  // condition timestamps; nullptr: Clock::Real()
};

class ApiEvictor : public Evictor {
 public:
  ApiEvictor(client::Client* client, ClusterState* state, ctrlkit::EventRecorder* recorder,
             ApiEvictorOptions options = {});
  ~ApiEvictor() override;  // Shutdown()
  ApiEvictor(const ApiEvictor&) = delete;
  ApiEvictor& operator=(const ApiEvictor&) = delete;

  void Evict(const TaskInfo& task, const EvictionCause& cause) override;
  // Sends the evictions already queued, then stops. Idempotent.
  void Shutdown();

 private:
  struct Item {
    std::string uid;
    std::string namespace_name;
    std::string name;
    std::string job_id;
    EvictionCause cause;
  };
  void Send(const Item& item);

  client::Client* const client_;
  ClusterState* const state_;
  ctrlkit::EventRecorder* const recorder_;
  const ApiEvictorOptions options_;
  Clock* const clock_;
  AsyncWriter<Item> writer_;  // last: its worker uses the members above
};

}  // namespace basalt::sched::cache
