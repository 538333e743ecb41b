#pragma once
// JobReconciler is the job controller's reconcile, level-triggered and keyed by job
// ("namespace/name"): it executes what the pure job logic (controllers/job/*) decides against
// the API server. Event handlers only record requests (the cause of a visit: a pod failed, a
// Command arrived) with AddRequest; Reconcile(key) then drains them in order, resolves each to
// an action (policy.h), executes the non-sync ones (kills with version/retry bookkeeping,
// PodGroup deletion, plugin OnJobDelete), runs delayed actions that came due, and always ends
// with a SyncJob: PodGroup named after the Job (stale same-name PodGroups of another Job UID
// are deleted with a UID precondition), plugin objects, pods once the PodGroup is Inqueue or
// later, and the Job status through the status subresource.
//
// What the reconciler remembers between visits, all of it rebuilt from the API server after a
// restart: pods it deleted (by UID, so their deletion never counts as PodEvicted, and they
// count as terminating until the cache sees them go), pods it created (so a lagging cache does
// not cause duplicate POSTs; names are deterministic, AlreadyExists is success), PodGroups it
// deleted, the last Job status it wrote (newer than a lagging cache), delayed actions, and
// Commands consumed (each acted on at most once, then deleted with a UID precondition).
//
// Bad input never crashes or spins the loop. A spec the webhook would have rejected
// (validate.h) leaves the job in its phase (Pending before initiation) with no PodGroup, pods
// or PVCs, a Warning event InvalidJobSpec and status.state.reason/message naming the fields; it
// is not retried (the next spec change brings the job back). Problems that may go away (a
// missing Queue, a PVC that does not exist yet, a pod template or PodGroup the API server
// rejects, a plugin error) record a Warning event and status.state.reason/message, and the
// visit fails, so the work queue retries it with backoff (up to --max-requeue-num times; see
// RetriesExhausted). The reason and message are cleared by the first visit that succeeds. A
// PodGroup deleted by someone else is created again with a Warning event PodGroupRecreated.
//
// The reconciler keeps the decisions (which request runs which action, what the phase table
// says, which pods a sync creates or removes); the I/O is done by the controls, which know
// nothing of it: PodControl and PodExpectations (pods, on a WorkerPool shared by all jobs),
// PodGroupControl, VolumeControl, PluginObjects and JobStatusWriter. The Job is decoded once
// per visit (DecodeJob) and replaced by what each write left; its plugins are created once per
// visit.
//
// Thread-safety: AddRequest and DeletedByController from any thread; Reconcile for different
// keys concurrently, for one key from one thread at a time (the WorkQueue guarantees it).
// Ownership: borrows the client, stores, recorder and clock.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/batch.h"
#include "common/client/client.h"
#include "common/ctrlkit/event_recorder.h"
#include "common/informer/store.h"
#include "common/util/clock.h"
#include "controllers/app/reconcile_loop.h"
#include "controllers/job/controller/job_index.h"
#include "controllers/job/controller/job_metrics.h"
#include "controllers/job/controller/job_status_writer.h"
#include "controllers/job/controller/plugin_objects.h"
#include "controllers/job/controller/pod_control.h"
#include "controllers/job/controller/pod_group_control.h"
#include "controllers/job/controller/volume_control.h"
#include "controllers/job/controller/worker_pool.h"
#include "controllers/job/model.h"
#include "controllers/job/plugins/registry.h"
#include "controllers/job/policy/delayed_actions.h"
#include "controllers/job/policy/policy.h"
#include "controllers/job/requests/requests.h"
#include "controllers/job/validate/validate.h"

namespace basalt::controllers {

// A recorded request plus what it needs beyond the pure JobRequest.
struct QueuedRequest {
  JobRequest request;
  std::string pod_uid;
  std::optional<int32_t> partition;
  // Set for Commands: deleted (UID precondition) once the action has been executed.
  std::string command_namespace;
  std::string command_name;
  std::string command_uid;
};

struct JobListers {
  const informer::Store* jobs = nullptr;
  const informer::Store* pods = nullptr;  // with PodsByJobIndexFunc() as kPodsByJobIndex
  const informer::Store* pod_groups = nullptr;
  const informer::Store* priority_classes = nullptr;  // optional
  // Optional: when set, a Job naming a Queue that does not exist waits (QueueNotFound).
  const informer::Store* queues = nullptr;
};

// The controls that do the reconciler's I/O. Each one left null is the real control over the
// reconciler's client; tests pass fakes to check the decisions without an API server.
struct JobControls {
  PodControlInterface* pods = nullptr;
  PodGroupControlInterface* pod_groups = nullptr;
  VolumeControlInterface* volumes = nullptr;
  PluginObjectsInterface* plugin_objects = nullptr;
  JobStatusWriterInterface* status = nullptr;
};

struct JobReconcilerOptions {
  Clock* clock = nullptr;                      // nullptr: Clock::Real()
  ctrlkit::EventRecorder* recorder = nullptr;  // optional
  // Pod creations and deletions in flight at once for one job, and the size of the worker
  // pool all jobs share for them.
  int pod_concurrency = 16;
  // --max-job-pods: a Job with more pods in total is refused (InvalidJobSpec, no pods).
  int64_t max_job_pods = kDefaultMaxJobPods;
  JobMetrics* metrics = nullptr;  // optional: Volcano's job series
  JobControls controls{};         // borrowed
};

class JobReconciler {
 public:
  JobReconciler(client::Client* client, JobListers listers, JobReconcilerOptions options);
  JobReconciler(const JobReconciler&) = delete;
  JobReconciler& operator=(const JobReconciler&) = delete;

  // Records a request for job `key`; the caller then enqueues the key.
  void AddRequest(const std::string& key, QueuedRequest request);

  // Whether the pod with `uid` was deleted by this controller (its deletion is not an
  // eviction).
  bool DeletedByController(const std::string& uid) const;

  // Returns the delay after which the job wants another visit (a delayed action), if any.
  ReconcileResult Reconcile(const std::string& key);

  // The work queue gave up on `key` after `retries` failed visits in a row (the last one with
  // `error`): records a Warning event ExecuteAction on the Job saying so. Deliberate
  // difference: Volcano then runs TerminateJob; Basalt keeps the job in its phase (the status
  // already says what is wrong) and acts again at the next change of the Job, its pods,
  // PodGroup or Queue, so a long API server outage or a late Queue does not kill user jobs.
  void RetriesExhausted(const std::string& key, int retries, const absl::Status& error);

  // Pending requests of `key` (tests).
  size_t PendingRequests(const std::string& key) const;

 private:
  struct JobMemory;
  struct Work;

  std::shared_ptr<JobMemory> MemoryFor(const std::string& key);
  // Makes `job` the visit's Job (counts and controlled resources from its status).
  static void SetJob(Work& w, api::Job job);
  ReconcileResult Visit(Work& w);
  // Records why the job cannot progress (status.state.reason/message, Warning event).
  void SetProblem(Work& w, std::string_view reason, std::string message);
  absl::Status Execute(Work& w, const ResolvedAction& resolved, const QueuedRequest& request);
  absl::StatusOr<JobCounts> SyncJob(Work& w);
  absl::StatusOr<JobCounts> KillPods(Work& w, const Plan& plan, Action action,
                                     const QueuedRequest& request, bool* deleted_any);
  // Returns the PodGroup phase ("" when it does not exist yet).
  absl::StatusOr<std::string> EnsurePodGroup(Work& w);
  absl::Status EnsureVolumes(Work& w);
  // The job's plugins, created once per visit.
  const absl::StatusOr<std::vector<std::unique_ptr<JobPlugin>>>& PluginsOf(Work& w) const;
  absl::Status RunPluginsOnJobAdd(Work& w);
  absl::Status RunPluginsOnJobUpdate(Work& w);
  absl::Status RunPluginsOnJobDelete(Work& w);
  absl::Status WriteStatus(Work& w, JobPhase next, const JobCounts& counts, bool kill_path);
  std::vector<JobPodInfo> PodsOf(const Work& w) const;
  void ConsumeCommand(const QueuedRequest& request);
  void RecordPodGroupPending(const Work& w);
  void RecordEvent(const Work& w, ctrlkit::EventType type, std::string_view reason,
                   std::string_view message);

  client::Client* const client_;
  const JobListers listers_;
  const JobReconcilerOptions options_;
  Clock* const clock_;
  const JobPluginRegistry plugins_;
  // The controls: the reconciler decides, they do the I/O.
  WorkerPool pool_;  // shared by every job's pod creations and deletions
  PodControl real_pods_;
  PodGroupControl real_pod_groups_;
  VolumeControl real_volumes_;
  PluginObjects real_plugin_objects_;
  JobStatusWriter real_status_;
  // The controls in use: options.controls where given, else the real ones above.
  PodControlInterface* const pod_control_;
  PodGroupControlInterface* const pod_group_control_;
  VolumeControlInterface* const volume_control_;
  PluginObjectsInterface* const plugin_objects_;
  JobStatusWriterInterface* const status_writer_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<JobMemory>> memory_;  // guarded by mu_
  // Command UIDs already acted on. Guarded by mu_.
  std::set<std::string> consumed_commands_;
};

}  // namespace basalt::controllers
