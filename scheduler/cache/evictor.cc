#include "scheduler/cache/evictor.h"

#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched::cache {

ApiEvictor::ApiEvictor(client::Client* client, ClusterState* state,
                       controller::EventRecorder* recorder)
    : client_(client),
      state_(state),
      recorder_(recorder),
      writer_(AsyncWriterOptions{.name = "evictions", .workers = 1},
              [this](Item& item) { Send(item); }) {}

ApiEvictor::~ApiEvictor() { Shutdown(); }

void ApiEvictor::Evict(const TaskInfo& task, std::string_view reason) {
  if (writer_.Enqueue(Item{task.uid, task.namespace_name, task.name, task.job_id,
                           std::string(reason)}) != Admission::kQueued) {
    BASALT_LOG_WARNING("Not evicting pod: shutting down", "pod", task.Key(), "reason", reason);
  }
}

void ApiEvictor::Send(const Item& item) {
  if (recorder_ != nullptr) {
    auto slash = item.job_id.find('/');
    if (slash != std::string::npos) {
      if (auto pg = state_->PodGroupReference(item.job_id.substr(0, slash),
                                              item.job_id.substr(slash + 1))) {
        recorder_->Event(*pg, controller::EventType::kNormal, "Evict", item.reason);
      }
    }
    if (auto pod = state_->PodReference(item.namespace_name, item.name)) {
      recorder_->Event(*pod, controller::EventType::kWarning, "Evict",
                       fmt::format("Pod is evicted, because of {}", item.reason));
    }
  }
  client::DeleteOptions options;
  options.precondition_uid = item.uid;
  absl::Status s = client_->Delete(client::Pods(), item.namespace_name, item.name, options);
  if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
    BASALT_LOG_WARNING("Cannot evict pod", "pod",
                       fmt::format("{}/{}", item.namespace_name, item.name), "reason", item.reason,
                       "error", MessageOf(s));
    state_->Touch();  // let a later cycle decide again
  } else {
    BASALT_LOG_INFO("Evicted pod", "pod", fmt::format("{}/{}", item.namespace_name, item.name),
                    "reason", item.reason);
  }
}

void ApiEvictor::Shutdown() { writer_.Shutdown(); }

}  // namespace basalt::sched::cache
