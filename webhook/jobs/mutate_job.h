#pragma once
// JobMutator (/jobs/mutate): fills the defaults of a batch.volcano.sh/v1alpha1 Job on CREATE
// as Volcano does, as a minimal JSON patch (only the fields that change):
//   spec.queue "" -> "default"; spec.schedulerName "" -> the first --scheduler-name;
//   spec.maxRetry 0 -> 3; per task: name "" -> "default<index>", hostNetwork without
//   dnsPolicy -> ClusterFirstWithHostNet, unset minAvailable -> minPartitions*partitionSize
//   (when minPartitions > 0) else replicas, maxRetry 0 -> 3; spec.minAvailable 0 -> the sum
//   of task minAvailable; plugins tensorflow/mpi/pytorch/ray imply svc, mpi implies ssh.
// Other operations are allowed unchanged. Stateless; thread-safe.
//
// Deliberate difference: Volcano replaces the whole /spec/tasks array when any task changes;
// Basalt patches single fields, so concurrent edits of other task fields are never lost.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/json_patch.h"
#include "webhook/router.h"

namespace basalt::webhook {

inline constexpr int kDefaultMaxRetry = 3;

// The patch that defaults `job` (a Job object), empty when nothing needs defaulting, and
// warnings kubectl shows the user.
struct JobMutation {
  JsonPatch patch;
  std::vector<std::string> warnings;
};
JobMutation MutateJob(const json::Value& job, std::string_view scheduler_name);

// Warning for an explicit `spec.maxRetry: 0`. Volcano silently turns it into 3 (users expect
// "no retry", issue #2012); Basalt keeps that for compatibility but says so.
inline constexpr std::string_view kMaxRetryZeroWarning =
    "spec.maxRetry: 0 is replaced by the default 3; maxRetry counts runs of the job, so use 1 "
    "for a job that must not be restarted";

class JobMutator : public AdmissionHandler {
 public:
  explicit JobMutator(std::string scheduler_name) : scheduler_name_(std::move(scheduler_name)) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
  // Looks at the object under review only.
  bool ReadsClusterState() const override { return false; }

 private:
  std::string scheduler_name_;
};

}  // namespace basalt::webhook
