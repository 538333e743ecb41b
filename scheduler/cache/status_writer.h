#pragma once
// ApiStatusWriter is the StatusSink the session writes its results to at close. The session
// already sends only what changed (decision 8); this writer also coalesces by object (a newer
// update of an object still waiting replaces the queued one, so each object is written at most
// once per cycle) and sends from a few worker threads (an AsyncWriter keyed by object), never
// blocking the scheduling thread:
//
//   PodGroup status  merge patch of phase, counts and conditions on podgroups/<name>/status, or
//                    on podgroups/<name> itself when the CRD has no status subresource; a
//                    settling one (Running, its pods bound but not running yet) is held up to
//                    kSettlingHold, so that the write of status.running, which follows once
//                    the kubelet reports the pods running, replaces it (one write, not two)
//   pod condition    strategic merge patch of PodScheduled=False (and nominatedNodeName) on
//                    pods/<name>/status
//   queue allocated  merge patch of status.allocated on queues/<name>/status, at most once
//                    per kQueueWriteInterval per queue (with the latest value): it changes
//                    with every bind, and cycles can follow each other closely
//   events           through the EventRecorder (aggregated, rate limited per object)
//
// What is queued is recorded in the ClusterState at once (so the next cycle does not write it
// again before the watch reports it); a failed write is forgotten there, so a later cycle
// writes it again.
//
// The shape of the PodGroup CRD: Basalt's serves podgroups/status; Volcano's own CRD (which
// users migrating from Volcano keep) has no status subresource, and Volcano writes PodGroups
// with a plain update, so there a /status write is a 404 while the object exists, and a write
// of the object itself is the only way to set status. The writer asks discovery
// (scheduling.volcano.sh/v1beta1) at start-up (DetectPodGroupStatusSubresource), asks again
// when a /status write gets 404 while the PodGroup exists, and then writes the way the CRD
// needs. A write of the object whose answer shows the status unchanged (the CRD gained a status
// subresource since) also makes it ask again.
//
// No write is dropped silently: each failed or abandoned write is logged (warning; info for an
// object that was deleted) and counted in basalt_scheduler_status_writes_dropped_total{kind,
// reason}. basalt_scheduler_podgroup_status_subresource is 1 while PodGroup status goes through
// /status and 0 while it goes through the object.
//
// Thread-safety: the StatusSink methods from the scheduling thread; Flush()/Shutdown() from any
// thread. Ownership: borrows the Client, ClusterState, EventRecorder and metrics registry.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "common/client/client.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/util/async_writer.h"
#include "common/util/clock.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/framework/interfaces.h"

namespace basalt::sched::cache {

class ApiStatusWriter : public StatusSink {
 public:
  static constexpr Clock::Duration kQueueWriteInterval = std::chrono::seconds(1);
  // How long a settling PodGroup status (PodGroupStatusUpdate::settling: Running, pods bound
  // but not running yet) is held before it is written, unless the next update of the PodGroup
  // (status.running grown) replaces it first and goes at once, carrying both changes.
  static constexpr Clock::Duration kSettlingHold = std::chrono::seconds(2);

  // `registry` receives the writer's metrics; null: a registry of its own (tests, tools).
  // `clock` stamps the pod conditions' lastTransitionTime (nullptr: Clock::Real()).
  ApiStatusWriter(client::Client* client, ClusterState* state, ctrlkit::EventRecorder* recorder,
                  int workers, prometheus::Registry* registry = nullptr, Clock* clock = nullptr);
  ~ApiStatusWriter() override;  // Shutdown()
  ApiStatusWriter(const ApiStatusWriter&) = delete;
  ApiStatusWriter& operator=(const ApiStatusWriter&) = delete;

  void UpdatePodGroupStatus(PodGroupStatusUpdate update) override;
  void UpdatePodCondition(PodConditionUpdate update) override;
  void UpdateQueueStatus(QueueStatusUpdate update) override;
  void RecordEvent(EventRecord event) override;

  // Sends what is queued, then stops the workers. Idempotent.
  void Shutdown();
  // Blocks until every write queued so far has been sent (or given up).
  void Flush() { writer_.Flush(); }
  AsyncWriterStats writer_stats() const { return writer_.stats(); }

  // Asks discovery whether podgroups/status is served and sets how PodGroup status is written.
  // On error (the API server unreachable, the group not served yet) keeps the current way and
  // returns the error; a later 404 on /status asks again.
  absl::Status DetectPodGroupStatusSubresource();
  // True while PodGroup status is written through podgroups/<name>/status.
  bool podgroup_status_subresource() const { return podgroup_status_subresource_.load(); }

  // Why a write was given up, as counted in basalt_scheduler_status_writes_dropped_total.
  static std::string_view DropReason(const absl::Status& status);

 private:
  struct QueueWrite {
    QueueStatusUpdate update;
    Resource previous;
    ClusterState::QueueShareStatus previous_share;
  };
  using Write = std::variant<PodGroupStatusUpdate, PodConditionUpdate, QueueWrite>;
  // False (and logged) when shut down.
  // `hold`: written no sooner than that from now unless a newer write of the key replaces it.
  bool Enqueue(std::string key, Write write, Clock::Duration min_interval = {},
               std::optional<Clock::Duration> hold = std::nullopt);
  void Send(const Write& write);
  void SendPodGroup(const PodGroupStatusUpdate& pg);
  // The merge patch on podgroups/<name>/status (`via_status`) or on podgroups/<name>.
  absl::StatusOr<json::Document> PatchPodGroup(const PodGroupStatusUpdate& pg,
                                               const std::string& patch, bool via_status);
  // Logs and counts a write given up; `what` names the object ("podgroup ns/x").
  void Dropped(std::string_view kind, const std::string& what, const absl::Status& status);
  // Discovery again, once per burst of 404s (serialized; concurrent callers wait for the answer).
  void Rediscover();

  std::unique_ptr<prometheus::Registry> owned_registry_;  // when no registry was given
  prometheus::Family<prometheus::Counter>& dropped_;
  prometheus::Gauge& subresource_gauge_;
  std::atomic<bool> podgroup_status_subresource_{true};
  std::mutex discovery_mu_;  // serializes Rediscover / DetectPodGroupStatusSubresource

  client::Client* const client_;
  ClusterState* const state_;
  ctrlkit::EventRecorder* const recorder_;
  Clock* const clock_;
  AsyncWriter<Write> writer_;  // last: its workers use the members above
};

}  // namespace basalt::sched::cache
