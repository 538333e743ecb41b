#pragma once
// PodGroupControl keeps a Job's PodGroup (named after the Job, ARCHITECTURE decision 3) on the
// API server: creates it, patches its spec when it differs from the desired one, replaces a
// PodGroup of the same name owned by another Job UID (deleted with a UID precondition), and
// deletes it on whole-job kills. PodGroupMemory is what it remembers of one job's PodGroup
// between visits.
//
// Thread-safety: PodGroupControl is thread-safe (client and store are); a PodGroupMemory
// belongs to one job and is used by that job's reconcile alone. Knows nothing of the
// reconciler: it takes the Job, the desired PodGroup and the memory.

#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/batch.h"
#include "common/api/object.h"
#include "common/client/client.h"
#include "common/informer/store.h"
#include "common/util/json.h"

namespace basalt::controllers {

struct PodGroupMemory {
  std::set<std::string> deleted_uids;  // PodGroups this controller deleted
  // UID of the job's PodGroup as last seen or created ("" after we deleted it): a PodGroup
  // that disappears otherwise was deleted by someone else.
  std::string uid;
};

// What the reconciler asks of PodGroup I/O (PodGroupControl does it against the API server;
// tests fake it).
class PodGroupControlInterface {
 public:
  struct Ensured {
    std::string phase;       // status.phase of the PodGroup ("" when just created without one)
    bool recreated = false;  // it had been deleted by someone else and was created again
  };
  virtual ~PodGroupControlInterface() = default;
  virtual absl::StatusOr<Ensured> Ensure(const api::Job& job, const json::Document& desired,
                                         bool lost_while_running, PodGroupMemory& memory,
                                         std::string* problem) = 0;
  virtual absl::Status Delete(const api::Job& job, PodGroupMemory& memory) = 0;
  virtual std::optional<api::Condition> PendingCondition(const api::Job& job) const = 0;
};

class PodGroupControl : public PodGroupControlInterface {
 public:
  // Borrows `client` and `pod_groups` (the PodGroup informer's store).
  PodGroupControl(client::Client* client, const informer::Store* pod_groups)
      : client_(client), pod_groups_(pod_groups) {}

  // Makes the PodGroup of `job` exist with `desired`'s spec. `lost_while_running`: the job is
  // Running, so a missing PodGroup was deleted by someone else. A creation the API server
  // refuses sets `problem`.
  absl::StatusOr<Ensured> Ensure(const api::Job& job, const json::Document& desired,
                                 bool lost_while_running, PodGroupMemory& memory,
                                 std::string* problem) override;

  // Deletes the PodGroup of `job` (if it is the job's and not already deleted).
  absl::Status Delete(const api::Job& job, PodGroupMemory& memory) override;

  // The newest True condition of the job's PodGroup unless it is Scheduled: why the gang
  // waits. nullopt when there is none (or no PodGroup).
  std::optional<api::Condition> PendingCondition(const api::Job& job) const override;

 private:
  client::Client* const client_;
  const informer::Store* const pod_groups_;
};

}  // namespace basalt::controllers
