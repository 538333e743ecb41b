#include "scheduler/cache/binder.h"

#include <utility>

#include "common/api/vocabulary.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/cache/vgpu.h"

namespace basalt::sched::cache {

ApiBinder::ApiBinder(client::Client* client, ClusterState* state, ctrlkit::EventRecorder* recorder,
                     int workers, std::function<void(const BindResult&)> on_result, Clock* clock,
                     bool bare_pod_podgroups)
    : client_(client),
      state_(state),
      recorder_(recorder),
      on_result_(std::move(on_result)),
      clock_(clock != nullptr ? clock : Clock::Real()),
      bare_pod_podgroups_(bare_pod_podgroups),
      writer_(AsyncWriterOptions{.name = "binds", .workers = workers},
              [this](Item& item) { Send(item); }) {}

ApiBinder::~ApiBinder() { Shutdown(); }

void ApiBinder::Bind(const std::string& job_id, std::vector<BindRequest> requests) {
  const Clock::TimePoint now = clock_->Now();
  for (BindRequest& r : requests) {
    if (absl::Status s = state_->Assume(r); !s.ok()) {
      // The cache moved on since the snapshot (pod deleted or bound elsewhere): nothing to send.
      BASALT_LOG_WARNING("Dropping a bind", "job", job_id, "pod",
                         fmt::format("{}/{}", r.namespace_name, r.pod_name), "node", r.node_name,
                         "reason", MessageOf(s));
      if (on_result_) on_result_(BindResult{false, {}});
      continue;
    }
    const std::string uid = r.task_uid;
    std::string group_name = bare_pod_podgroups_ ? state_->BarePodGroupName(uid) : "";
    if (writer_.Enqueue(Item{std::move(r), now, std::move(group_name)}) != Admission::kQueued) {
      // Shut down: nothing will send it, so the placement must not stay assumed.
      state_->Forget(uid);
      if (on_result_) on_result_(BindResult{false, {}});
    }
  }
}

void ApiBinder::Send(const Item& item) {
  const BindRequest& r = item.request;
  // A vGPU task's assignment goes into the pod with the binding itself: one API write, and the
  // device plugin never sees the pod on the node without it (Volcano patches it first).
  std::vector<std::pair<std::string, std::string>> annotations;
  if (!r.vgpu.empty()) {
    annotations = VgpuBindAnnotations(r.vgpu, r.node_name,
                                      std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  }
  if (!item.group_name.empty()) {
    annotations.emplace_back(std::string(api::kGroupNameAnnotation), item.group_name);
  }
  absl::Status s =
      client_->Bind(r.namespace_name, r.pod_name, r.node_name, r.task_uid, annotations);
  BindResult result{s.ok(), clock_->Now() - item.queued};
  std::optional<api::ObjectReference> ref = state_->PodReference(r.namespace_name, r.pod_name);
  if (s.ok()) {
    BASALT_VLOG(3, "Bound pod", "pod", fmt::format("{}/{}", r.namespace_name, r.pod_name), "node",
                r.node_name);
    if (ref.has_value() && recorder_ != nullptr) {
      recorder_->Event(*ref, ctrlkit::EventType::kNormal, "Scheduled",
                       fmt::format("Successfully assigned {}/{} to {}", r.namespace_name,
                                   r.pod_name, r.node_name));
    }
  } else {
    BASALT_LOG_WARNING("Bind failed; rolling the placement back", "pod",
                       fmt::format("{}/{}", r.namespace_name, r.pod_name), "node", r.node_name,
                       "error", MessageOf(s));
    state_->Forget(r.task_uid);
    if (ref.has_value() && recorder_ != nullptr) {
      recorder_->Event(*ref, ctrlkit::EventType::kWarning, "FailedScheduling",
                       fmt::format("failed to bind to node {}: {}", r.node_name, MessageOf(s)));
    }
  }
  if (on_result_) on_result_(result);
}

void ApiBinder::Shutdown() { writer_.Shutdown(); }

}  // namespace basalt::sched::cache
