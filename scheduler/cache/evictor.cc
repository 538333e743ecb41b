#include "scheduler/cache/evictor.h"

#include <utility>

#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::sched::cache {

ApiEvictor::ApiEvictor(client::Client* client, ClusterState* state,
                       controller::EventRecorder* recorder)
    : client_(client), state_(state), recorder_(recorder), worker_([this] { Work(); }) {}

ApiEvictor::~ApiEvictor() { Shutdown(); }

void ApiEvictor::Evict(const TaskInfo& task, std::string_view reason) {
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(
        Item{task.uid, task.namespace_name, task.name, task.job_id, std::string(reason)});
  }
  cond_.notify_one();
}

void ApiEvictor::Work() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cond_.wait(l, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
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
                         fmt::format("{}/{}", item.namespace_name, item.name), "reason",
                         item.reason, "error", MessageOf(s));
      state_->Touch();  // let a later cycle decide again
    } else {
      BASALT_LOG_INFO("Evicted pod", "pod", fmt::format("{}/{}", item.namespace_name, item.name),
                      "reason", item.reason);
    }
    l.lock();
  }
}

void ApiEvictor::Shutdown() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cond_.notify_all();
  if (worker_.joinable()) worker_.join();
}

}  // namespace basalt::sched::cache
