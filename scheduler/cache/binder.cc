#include "scheduler/cache/binder.h"

#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched::cache {

ApiBinder::ApiBinder(client::Client* client, ClusterState* state,
                     controller::EventRecorder* recorder, int workers,
                     std::function<void(const BindResult&)> on_result)
    : client_(client), state_(state), recorder_(recorder), on_result_(std::move(on_result)) {
  for (int i = 0; i < std::max(1, workers); ++i) workers_.emplace_back([this] { Work(); });
}

ApiBinder::~ApiBinder() { Shutdown(); }

void ApiBinder::Bind(const std::string& job_id, std::vector<BindRequest> requests) {
  const auto now = std::chrono::steady_clock::now();
  std::vector<Item> accepted;
  for (BindRequest& r : requests) {
    if (absl::Status s = state_->Assume(r); !s.ok()) {
      // The cache moved on since the snapshot (pod deleted or bound elsewhere): nothing to send.
      BASALT_LOG_WARNING("Dropping a bind", "job", job_id, "pod",
                         fmt::format("{}/{}", r.namespace_name, r.pod_name), "node", r.node_name,
                         "reason", MessageOf(s));
      if (on_result_) on_result_(BindResult{false, {}});
      continue;
    }
    accepted.push_back(Item{std::move(r), now});
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    for (Item& i : accepted) queue_.push_back(std::move(i));
  }
  cond_.notify_all();
}

void ApiBinder::Work() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cond_.wait(l, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    Item item = std::move(queue_.front());
    queue_.pop_front();
    ++in_flight_;
    l.unlock();
    Send(item);
    l.lock();
    --in_flight_;
  }
}

void ApiBinder::Send(const Item& item) {
  const BindRequest& r = item.request;
  absl::Status s = client_->Bind(r.namespace_name, r.pod_name, r.node_name, r.task_uid);
  BindResult result{s.ok(), std::chrono::steady_clock::now() - item.queued};
  std::optional<api::ObjectReference> ref = state_->PodReference(r.namespace_name, r.pod_name);
  if (s.ok()) {
    BASALT_VLOG(3, "Bound pod", "pod", fmt::format("{}/{}", r.namespace_name, r.pod_name), "node",
                r.node_name);
    if (ref.has_value() && recorder_ != nullptr) {
      recorder_->Event(*ref, controller::EventType::kNormal, "Scheduled",
                       fmt::format("Successfully assigned {}/{} to {}", r.namespace_name,
                                   r.pod_name, r.node_name));
    }
  } else {
    BASALT_LOG_WARNING("Bind failed; rolling the placement back", "pod",
                       fmt::format("{}/{}", r.namespace_name, r.pod_name), "node", r.node_name,
                       "error", MessageOf(s));
    state_->Forget(r.task_uid);
    if (ref.has_value() && recorder_ != nullptr) {
      recorder_->Event(*ref, controller::EventType::kWarning, "FailedScheduling",
                       fmt::format("failed to bind to node {}: {}", r.node_name, MessageOf(s)));
    }
  }
  if (on_result_) on_result_(result);
}

void ApiBinder::Shutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cond_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

size_t ApiBinder::pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return queue_.size() + in_flight_;
}

}  // namespace basalt::sched::cache
