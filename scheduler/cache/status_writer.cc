#include "scheduler/cache/status_writer.h"

#include <chrono>
#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "scheduler/cache/convert.h"

namespace basalt::sched::cache {

ApiStatusWriter::ApiStatusWriter(client::Client* client, ClusterState* state,
                                 controller::EventRecorder* recorder, int workers)
    : client_(client), state_(state), recorder_(recorder) {
  for (int i = 0; i < std::max(1, workers); ++i) workers_.emplace_back([this] { Work(); });
}

ApiStatusWriter::~ApiStatusWriter() { Shutdown(); }

void ApiStatusWriter::Enqueue(std::string key, Write write) {
  {
    std::lock_guard<std::mutex> l(mu_);
    auto [it, inserted] = pending_.insert_or_assign(key, std::move(write));
    if (inserted) order_.push_back(std::move(key));
  }
  cond_.notify_one();
}

void ApiStatusWriter::UpdatePodGroupStatus(PodGroupStatusUpdate update) {
  state_->SetPodGroupStatus(update.job_id, update.status);
  std::string key = "pg/" + update.job_id;
  Enqueue(std::move(key), std::move(update));
}

void ApiStatusWriter::UpdatePodCondition(PodConditionUpdate update) {
  state_->SetPodCondition(update.task_uid, update.condition);
  std::string key = "pod/" + update.task_uid;
  Enqueue(std::move(key), std::move(update));
}

void ApiStatusWriter::UpdateQueueStatus(QueueStatusUpdate update) {
  Resource previous = state_->QueueAllocatedInApi(update.queue);
  state_->SetQueueAllocated(update.queue, update.allocated);
  std::string key = "queue/" + update.queue;
  Enqueue(std::move(key), QueueWrite{std::move(update), std::move(previous)});
}

void ApiStatusWriter::RecordEvent(EventRecord event) {
  if (recorder_ == nullptr) return;
  std::optional<api::ObjectReference> ref;
  if (event.kind == "Pod") {
    ref = state_->PodReference(event.namespace_name, event.name);
  } else if (event.kind == "PodGroup") {
    ref = state_->PodGroupReference(event.namespace_name, event.name);
  }
  if (!ref.has_value()) return;
  recorder_->Event(
      *ref,
      event.type == "Warning" ? controller::EventType::kWarning : controller::EventType::kNormal,
      event.reason, event.message);
}

void ApiStatusWriter::Work() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cond_.wait(l, [this] { return stopping_ || !order_.empty(); });
    if (order_.empty()) return;
    std::string key = std::move(order_.front());
    order_.pop_front();
    auto it = pending_.find(key);
    if (it == pending_.end()) continue;
    Write write = std::move(it->second);
    pending_.erase(it);
    l.unlock();
    Send(write);
    l.lock();
  }
}

void ApiStatusWriter::Send(const Write& write) {
  if (const auto* pg = std::get_if<PodGroupStatusUpdate>(&write)) {
    absl::Status s =
        client_
            ->Patch(client::PodGroups(), pg->namespace_name, pg->name, client::PatchType::kMerge,
                    PodGroupStatusPatch(pg->status), "status")
            .status();
    if (!s.ok()) {
      if (s.code() != absl::StatusCode::kNotFound) {
        BASALT_LOG_WARNING("Cannot write PodGroup status", "podgroup", pg->job_id, "error",
                           MessageOf(s));
      }
      state_->ForgetPodGroupStatus(pg->job_id);
    }
    return;
  }
  if (const auto* pod = std::get_if<PodConditionUpdate>(&write)) {
    absl::Status s =
        client_
            ->Patch(client::Pods(), pod->namespace_name, pod->pod_name,
                    client::PatchType::kStrategicMerge,
                    PodConditionPatch(pod->condition, std::chrono::system_clock::now()), "status")
            .status();
    if (!s.ok()) {
      if (s.code() != absl::StatusCode::kNotFound) {
        BASALT_LOG_WARNING("Cannot write the pod condition", "pod",
                           fmt::format("{}/{}", pod->namespace_name, pod->pod_name), "error",
                           MessageOf(s));
      }
      state_->ForgetPodCondition(pod->task_uid);
    }
    return;
  }
  const auto& q = std::get<QueueWrite>(write);
  absl::Status s = client_
                       ->Patch(client::Queues(), "", q.update.queue, client::PatchType::kMerge,
                               QueueAllocatedPatch(q.update.allocated, q.previous), "status")
                       .status();
  if (!s.ok()) {
    if (s.code() != absl::StatusCode::kNotFound) {
      BASALT_LOG_WARNING("Cannot write queue status", "queue", q.update.queue, "error",
                         MessageOf(s));
    }
    state_->ForgetQueueAllocated(q.update.queue);
  }
}

void ApiStatusWriter::Shutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cond_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace basalt::sched::cache
