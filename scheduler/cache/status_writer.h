#pragma once
// ApiStatusWriter is the StatusSink the session writes its results to at close. The session
// already sends only what changed (decision 8); this writer also coalesces by object (a newer
// update of an object still waiting replaces the queued one, so each object is written at most
// once per cycle) and sends from a few worker threads, never blocking the scheduling thread:
//
//   PodGroup status  merge patch of phase, counts and conditions on podgroups/<name>/status
//   pod condition    strategic merge patch of PodScheduled=False (and nominatedNodeName) on
//                    pods/<name>/status
//   queue allocated  merge patch of status.allocated on queues/<name>/status
//   events           through the EventRecorder (aggregated, rate limited per object)
//
// What is queued is recorded in the ClusterState at once (so the next cycle does not write it
// again before the watch reports it); a failed write is forgotten there, so a later cycle
// writes it again.
//
// Thread-safety: the StatusSink methods from the scheduling thread; Flush()/Shutdown() from any
// thread. Ownership: borrows the Client, ClusterState and EventRecorder.

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "common/client/client.h"
#include "common/controller/event_recorder.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

class ApiStatusWriter : public StatusSink {
 public:
  ApiStatusWriter(client::Client* client, ClusterState* state, controller::EventRecorder* recorder,
                  int workers);
  ~ApiStatusWriter() override;  // Shutdown()
  ApiStatusWriter(const ApiStatusWriter&) = delete;
  ApiStatusWriter& operator=(const ApiStatusWriter&) = delete;

  void UpdatePodGroupStatus(PodGroupStatusUpdate update) override;
  void UpdatePodCondition(PodConditionUpdate update) override;
  void UpdateQueueStatus(QueueStatusUpdate update) override;
  void RecordEvent(EventRecord event) override;

  // Sends what is queued, then stops the workers. Idempotent.
  void Shutdown();

 private:
  struct QueueWrite {
    QueueStatusUpdate update;
    Resource previous;
  };
  using Write = std::variant<PodGroupStatusUpdate, PodConditionUpdate, QueueWrite>;
  void Enqueue(std::string key, Write write);
  void Work();
  void Send(const Write& write);

  client::Client* const client_;
  ClusterState* const state_;
  controller::EventRecorder* const recorder_;

  std::mutex mu_;
  std::condition_variable cond_;
  std::map<std::string, Write> pending_;  // guarded by mu_
  std::deque<std::string> order_;         // guarded by mu_
  bool stopping_ = false;                 // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace basalt::sched::cache
