#include "webhook/fake_lister.h"

#include "fmt/format.h"

namespace basalt::webhook {

void FakeLister::AddQueue(QueueInfo queue) {
  absl::MutexLock lock(&mu_);
  std::string name = queue.name;
  queues_[name] = std::move(queue);
}

void FakeLister::AddQueue(std::string_view name, std::string_view state) {
  QueueInfo q;
  q.name = std::string(name);
  q.state = std::string(state);
  AddQueue(std::move(q));
}

void FakeLister::AddPodGroup(std::string_view ns, std::string_view name, std::string_view queue) {
  absl::MutexLock lock(&mu_);
  podgroups_[fmt::format("{}/{}", ns, name)] = std::string(queue);
}

void FakeLister::AddJob(std::string_view ns, std::string_view name, std::string_view queue) {
  absl::MutexLock lock(&mu_);
  jobs_[fmt::format("{}/{}", ns, name)] = std::string(queue);
}

void FakeLister::AddPriorityClass(std::string_view name) {
  absl::MutexLock lock(&mu_);
  priority_classes_.emplace(name);
}

void FakeLister::SetNamespaceDefaultQueue(std::string_view ns, std::string_view queue) {
  absl::MutexLock lock(&mu_);
  namespace_queues_[std::string(ns)] = std::string(queue);
}

void FakeLister::FailQueueLookups(absl::Status status) {
  absl::MutexLock lock(&mu_);
  queue_lookup_error_ = std::move(status);
}

absl::StatusOr<QueueInfo> FakeLister::GetQueue(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  if (!queue_lookup_error_.ok()) return queue_lookup_error_;
  auto it = queues_.find(name);
  if (it == queues_.end()) {
    return absl::NotFoundError(fmt::format("queues.scheduling.volcano.sh \"{}\" not found", name));
  }
  return it->second;
}

std::vector<std::string> FakeLister::ChildQueues(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [n, q] : queues_) {
    if (q.parent == name && n != name) out.push_back(n);
  }
  return out;
}

int FakeLister::CountPodGroupsInQueue(std::string_view queue) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [key, q] : podgroups_) n += q == queue ? 1 : 0;
  return n;
}

int FakeLister::CountJobsInQueue(std::string_view queue) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [key, q] : jobs_) n += q == queue ? 1 : 0;
  return n;
}

bool FakeLister::PriorityClassExists(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  return priority_classes_.find(name) != priority_classes_.end();
}

std::string FakeLister::NamespaceDefaultQueue(std::string_view ns) const {
  absl::MutexLock lock(&mu_);
  auto it = namespace_queues_.find(ns);
  return it == namespace_queues_.end() ? std::string() : it->second;
}

}  // namespace basalt::webhook
