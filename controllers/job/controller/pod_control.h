#pragma once
// The job controller's pod I/O, in the spirit of Kubernetes' PodControlInterface and
// ControllerExpectations:
//
// - PodExpectations: what one job's reconciles did to its pods that the informer cache may not
//   show yet (pods created, by name, for a minute; pods deleted, by name and UID, until the
//   cache no longer lists them). Observe() applies them to the cached pods, so a lagging cache
//   neither causes duplicate POSTs (names are deterministic, AlreadyExists is success) nor
//   hides a deletion.
// - PodControl: creates pods in slow-start batches and deletes pods (marked out of sync first,
//   then deleted with a UID precondition), on a WorkerPool shared by every job, and remembers
//   which pod UIDs it deleted so their deletion is never taken for an eviction.
//
// Neither knows the reconciler: they take the client, the pool, the clock and the model
// objects (the Job, its pods) as arguments.
//
// Thread-safety: a PodExpectations belongs to one job and is used by that job's reconcile
// alone (thread-compatible). PodControl is thread-safe; CreatePods/DeletePods update the
// PodExpectations they are given from the calling thread only.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/batch.h"
#include "common/client/client.h"
#include "common/util/clock.h"
#include "common/util/json.h"
#include "controllers/job/controller/worker_pool.h"
#include "controllers/job/requests/requests.h"

namespace basalt::controllers {

class PodExpectations {
 public:
  // How long a created pod the cache has not shown yet is expected.
  static constexpr auto kCreatedExpectation = std::chrono::seconds(60);

  void ExpectCreated(const std::string& name, Clock::TimePoint now) { created_[name] = now; }
  void ExpectDeleted(const std::string& name, const std::string& uid);
  // A kill makes every expected creation moot.
  void ForgetCreations() { created_.clear(); }
  void Clear();

  // Applies the expectations to `pods`, the cached pods of `job`: pods we deleted count as
  // terminating until the cache no longer lists them; pods we created that the cache does not
  // list yet are appended as Pending (their task found from the name <job>-<task>-<index>).
  // Expectations the cache has caught up with, and expired ones, are dropped.
  void Observe(const api::Job& job, Clock::TimePoint now, std::vector<JobPodInfo>& pods);

 private:
  std::map<std::string, Clock::TimePoint> created_;  // name -> created at
  std::map<std::string, std::string> deleted_;       // name -> UID
};

// One pod to create: its document is built only when its turn comes.
struct PodCreation {
  std::string name;
  std::string task;
  int32_t index = 0;
};

struct PodCreationResult {
  // One per creation, in order: OK (created or already there), Cancelled (skipped: not
  // attempted after an error, or its task's template was rejected), or the error.
  std::vector<absl::Status> results;
  // A batch had an error other than 422 Invalid: the remaining creations were not attempted.
  bool stopped = false;
};

// What the reconciler asks of pod I/O (PodControl does it against the API server; tests fake it).
class PodControlInterface {
 public:
  virtual ~PodControlInterface() = default;
  virtual PodCreationResult CreatePods(
      std::string_view ns, const std::vector<PodCreation>& pods,
      const std::function<absl::StatusOr<json::Document>(const PodCreation&)>& build,
      PodExpectations& expectations) = 0;
  virtual std::vector<absl::Status> DeletePods(const std::vector<const JobPodInfo*>& pods,
                                               PodExpectations& expectations) = 0;
  virtual absl::Status DeletePod(const JobPodInfo& pod, PodExpectations& expectations) = 0;
  virtual bool DeletedByController(const std::string& uid) const = 0;
};

class PodControl : public PodControlInterface {
 public:
  struct Options {
    Clock* clock = nullptr;  // nullptr: Clock::Real()
    // Pod creations and deletions in flight at once for one job.
    int concurrency = 16;
  };
  // Borrows `client` and `pool`.
  PodControl(client::Client* client, WorkerPool* pool, Options options);
  PodControl(const PodControl&) = delete;
  PodControl& operator=(const PodControl&) = delete;

  // Creates `pods` in namespace `ns` in slow-start batches (1, 2, 4, ... as Kubernetes'
  // ReplicaSet controller does): a template the API server rejects, a quota or an outage costs
  // a few requests, not one per pod. A batch in which a create failed ends the creations,
  // except for 422 Invalid: that task's other pods would be rejected the same way and are
  // skipped, while the other tasks carry on. `build` makes a pod's document (an error is that
  // pod's result). Created pods are expected in `expectations`.
  PodCreationResult CreatePods(
      std::string_view ns, const std::vector<PodCreation>& pods,
      const std::function<absl::StatusOr<json::Document>(const PodCreation&)>& build,
      PodExpectations& expectations) override;

  // Deletes `pods` (in parallel), each marked out of sync first (unless it already is) and
  // deleted with its UID as precondition; a pod already gone counts as deleted. Returns one
  // status per pod; deleted pods are expected gone in `expectations`.
  std::vector<absl::Status> DeletePods(const std::vector<const JobPodInfo*>& pods,
                                       PodExpectations& expectations) override;
  absl::Status DeletePod(const JobPodInfo& pod, PodExpectations& expectations) override;

  // Whether the pod with `uid` was deleted by this controller (its deletion is no eviction).
  bool DeletedByController(const std::string& uid) const override;

 private:
  // The deletion itself, written once; thread-safe.
  absl::Status Delete(const JobPodInfo& pod);
  void RememberOwnDeletion(const std::string& uid);

  client::Client* const client_;
  WorkerPool* const pool_;
  Clock* const clock_;
  const size_t concurrency_;

  mutable std::mutex mu_;
  // Pod UID -> when this controller deleted it. Guarded by mu_.
  std::unordered_map<std::string, Clock::TimePoint> own_deletions_;
  int own_deletions_since_prune_ = 0;  // guarded by mu_
};

}  // namespace basalt::controllers
