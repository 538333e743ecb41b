#pragma once
// ApiBinder is the Binder the scheduling session hands committed gangs to. Bind() returns at
// once: it records each placement in the ClusterState (the task is Binding on its node, so the
// next cycle sees the resources taken) and queues the POST pods/<name>/binding (with the pod
// UID as precondition) for a small pool of workers. A successful bind emits the Normal event
// `Scheduled` ("Successfully assigned <ns>/<pod> to <node>"); a failed one rolls the assumed
// placement back (the pod is Pending again in the next cycle) and emits a Warning event
// `FailedScheduling` ("failed to bind to node <node>: <error>").
//
// With `bare_pod_podgroups` (the scheduler's --bare-pod-podgroups, matching the controller's
// flag of that name), the binding of a bare pod with no group annotation also carries
// scheduling.k8s.io/group-name: podgroup-<pod uid> (ClusterState::BarePodGroupName): the API
// server copies a Binding's annotations to the pod, so the pod names the PodGroup the podgroup
// controller makes for it without a PATCH of its own (Volcano's controller patches it).
//
// The POSTs go through an AsyncWriter (FIFO, `workers` threads).
//
// Thread-safety: Bind() from the scheduling thread; Shutdown() from any thread. Ownership:
// borrows the Client, ClusterState and EventRecorder, which must outlive it; owns its workers.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/client/client.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/util/async_writer.h"
#include "common/util/clock.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

struct BindResult {
  bool ok = false;
  // From Bind() to the API server's answer.
  Clock::Duration latency{};
};

class ApiBinder : public Binder {
 public:
  // `clock` times the binds (nullptr: Clock::Real()).
  ApiBinder(client::Client* client, ClusterState* state, ctrlkit::EventRecorder* recorder,
            int workers, std::function<void(const BindResult&)> on_result = {},
            Clock* clock = nullptr, bool bare_pod_podgroups = false);
  ~ApiBinder() override;  // Shutdown()
  ApiBinder(const ApiBinder&) = delete;
  ApiBinder& operator=(const ApiBinder&) = delete;

  void Bind(const std::string& job_id, std::vector<BindRequest> requests) override;

  // Finishes the binds already queued, then stops the workers. Idempotent.
  void Shutdown();
  // Binds queued or in flight.
  size_t pending() const { return writer_.pending(); }
  AsyncWriterStats writer_stats() const { return writer_.stats(); }

 private:
  struct Item {
    BindRequest request;
    Clock::TimePoint queued;
    std::string group_name;  // the group annotation to set with the bind ("" = none)
  };
  void Send(const Item& item);

  client::Client* const client_;
  ClusterState* const state_;
  ctrlkit::EventRecorder* const recorder_;
  const std::function<void(const BindResult&)> on_result_;
  Clock* const clock_;
  const bool bare_pod_podgroups_;
  AsyncWriter<Item> writer_;  // last: its workers use the members above
};

}  // namespace basalt::sched::cache
