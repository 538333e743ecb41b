#include "scheduler/cache/evictor.h"

#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/cache/convert.h"

namespace basalt::sched::cache {

ApiEvictor::ApiEvictor(client::Client* client, ClusterState* state,
                       ctrlkit::EventRecorder* recorder, ApiEvictorOptions options)
    : client_(client),
      state_(state),
      recorder_(recorder),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      writer_(AsyncWriterOptions{.name = "evictions", .workers = 1},
              [this](Item& item) { Send(item); }) {}

ApiEvictor::~ApiEvictor() { Shutdown(); }

void ApiEvictor::Evict(const TaskInfo& task, const EvictionCause& cause) {
  state_->AssumeEvicted(task.uid);
  if (writer_.Enqueue(Item{task.uid, task.namespace_name, task.name, task.job_id, cause}) !=
      Admission::kQueued) {
    BASALT_LOG_WARNING("Not evicting pod: shutting down", "pod", task.Key(), "reason",
                       cause.reason);
    state_->ForgetEvicted(task.uid);
  }
}

void ApiEvictor::Send(const Item& item) {
  const std::string key = fmt::format("{}/{}", item.namespace_name, item.name);
  const std::string message = item.cause.Message();
  if (recorder_ != nullptr) {
    auto slash = item.job_id.find('/');
    if (slash != std::string::npos) {
      if (auto pg = state_->PodGroupReference(item.job_id.substr(0, slash),
                                              item.job_id.substr(slash + 1))) {
        recorder_->Event(*pg, ctrlkit::EventType::kWarning, api::kEvictedEventReason,
                         fmt::format("Pod {} evicted by {}", key, message));
      }
    }
    if (auto pod = state_->PodReference(item.namespace_name, item.name)) {
      recorder_->Event(*pod, ctrlkit::EventType::kWarning, api::kEvictedEventReason,
                       fmt::format("Evicted by {}", message));
    }
  }
  // The condition first, as Volcano: a pod already gone or a refused patch does not stop the
  // delete.
  absl::Status cond =
      client_
          ->Patch(client::Pods(), item.namespace_name, item.name,
                  client::PatchType::kStrategicMerge,
                  DisruptionTargetPatch(options_.scheduler_name, clock_->WallNow()), "status")
          .status();
  if (!cond.ok() && cond.code() != absl::StatusCode::kNotFound) {
    BASALT_LOG_WARNING("Cannot set the DisruptionTarget condition; deleting anyway", "pod", key,
                       "error", MessageOf(cond));
  }
  client::DeleteOptions options;
  options.precondition_uid = item.uid;
  absl::Status s = client_->Delete(client::Pods(), item.namespace_name, item.name, options);
  if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
    BASALT_LOG_WARNING("Cannot evict pod", "pod", key, "reason", item.cause.reason, "error",
                       MessageOf(s));
    state_->ForgetEvicted(item.uid);  // let a later cycle decide again
  } else {
    BASALT_LOG_INFO("Evicted pod", "pod", key, "cause", message);
  }
}

void ApiEvictor::Shutdown() { writer_.Shutdown(); }

}  // namespace basalt::sched::cache
