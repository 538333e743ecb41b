#include "controllers/job/controller/pod_control.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/client/errors.h"
#include "controllers/job/requests/requests.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr auto kOwnDeletionMemory = std::chrono::minutes(30);

}  // namespace

void PodExpectations::ExpectDeleted(const std::string& name, const std::string& uid) {
  deleted_[name] = uid;
  created_.erase(name);
}

void PodExpectations::Clear() {
  created_.clear();
  deleted_.clear();
}

void PodExpectations::Observe(const api::Job& job, Clock::TimePoint now,
                              std::vector<JobPodInfo>& pods) {
  std::set<std::string, std::less<>> seen;
  for (JobPodInfo& p : pods) {
    seen.insert(p.name);
    auto d = deleted_.find(p.name);
    if (d != deleted_.end() && d->second == p.uid) p.terminating = true;
    created_.erase(p.name);
  }
  std::erase_if(deleted_, [&](const auto& kv) { return seen.count(kv.first) == 0; });
  for (auto it = created_.begin(); it != created_.end();) {
    if (now - it->second > kCreatedExpectation) {
      it = created_.erase(it);
      continue;
    }
    JobPodInfo p;
    p.name = it->first;
    p.namespace_name = std::string(job.namespace_name());
    p.job_name = std::string(job.name());
    p.job_uid = std::string(job.uid());
    p.phase = "Pending";
    for (const api::TaskSpec& t : job.spec().tasks) {
      const std::string prefix = fmt::format("{}-{}-", job.name(), t.name);
      if (it->first.rfind(prefix, 0) == 0) p.task = t.name;
    }
    pods.push_back(std::move(p));
    ++it;
  }
}

PodControl::PodControl(client::Client* client, WorkerPool* pool, Options options)
    : client_(client),
      pool_(pool),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      concurrency_(static_cast<size_t>(std::max(1, options.concurrency))) {}

PodCreationResult PodControl::CreatePods(
    std::string_view ns, const std::vector<PodCreation>& pods,
    const std::function<absl::StatusOr<json::Document>(const PodCreation&)>& build,
    PodExpectations& expectations) {
  PodCreationResult out;
  out.results.assign(pods.size(), absl::CancelledError("not attempted"));
  std::mutex rejected_mu;
  std::set<std::string> rejected_tasks;  // guarded by rejected_mu
  const absl::Status skipped = absl::CancelledError("skipped");
  auto create_one = [&](size_t i) {
    const PodCreation& c = pods[i];
    {
      std::lock_guard<std::mutex> l(rejected_mu);
      if (rejected_tasks.count(c.task) > 0) {
        out.results[i] = skipped;
        return;
      }
    }
    absl::StatusOr<json::Document> pod = build(c);
    if (!pod.ok()) {
      out.results[i] = pod.status();
      return;
    }
    absl::StatusOr<json::Document> created =
        client_->Create(client::Pods(), ns, json::Serialize(*pod));
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
      out.results[i] = created.status();
      if (client::IsInvalid(created.status())) {
        std::lock_guard<std::mutex> l(rejected_mu);
        rejected_tasks.insert(c.task);
      }
      return;
    }
    out.results[i] = absl::OkStatus();
  };
  for (size_t begin = 0, batch = 1; begin < pods.size() && !out.stopped; batch *= 2) {
    const size_t n = std::min(batch, pods.size() - begin);
    pool_->ParallelFor(n, concurrency_, [&](size_t k) { create_one(begin + k); });
    for (size_t i = begin; i < begin + n; ++i) {
      const absl::Status& r = out.results[i];
      if (!r.ok() && !absl::IsCancelled(r) && !client::IsInvalid(r)) out.stopped = true;
    }
    begin += n;
  }
  const Clock::TimePoint now = clock_->Now();
  for (size_t i = 0; i < pods.size(); ++i) {
    if (out.results[i].ok()) expectations.ExpectCreated(pods[i].name, now);
  }
  return out;
}

absl::Status PodControl::Delete(const JobPodInfo& pod) {
  RememberOwnDeletion(pod.uid);
  if (!pod.out_of_sync) {
    absl::StatusOr<json::Document> patched = client_->Patch(
        client::Pods(), pod.namespace_name, pod.name, client::PatchType::kMerge, OutOfSyncPatch());
    if (!patched.ok()) {
      return absl::IsNotFound(patched.status()) ? absl::OkStatus() : patched.status();
    }
  }
  client::DeleteOptions o;
  o.precondition_uid = pod.uid;
  absl::Status s = client_->Delete(client::Pods(), pod.namespace_name, pod.name, o);
  if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) return s;
  return absl::OkStatus();
}

std::vector<absl::Status> PodControl::DeletePods(const std::vector<const JobPodInfo*>& pods,
                                                 PodExpectations& expectations) {
  std::vector<absl::Status> results(pods.size());
  pool_->ParallelFor(pods.size(), concurrency_, [&](size_t i) { results[i] = Delete(*pods[i]); });
  for (size_t i = 0; i < pods.size(); ++i) {
    if (results[i].ok()) expectations.ExpectDeleted(pods[i]->name, pods[i]->uid);
  }
  return results;
}

absl::Status PodControl::DeletePod(const JobPodInfo& pod, PodExpectations& expectations) {
  absl::Status s = Delete(pod);
  if (s.ok()) expectations.ExpectDeleted(pod.name, pod.uid);
  return s;
}

bool PodControl::DeletedByController(const std::string& uid) const {
  std::lock_guard<std::mutex> l(mu_);
  return own_deletions_.count(uid) > 0;
}

void PodControl::RememberOwnDeletion(const std::string& uid) {
  const Clock::TimePoint now = clock_->Now();
  std::lock_guard<std::mutex> l(mu_);
  own_deletions_[uid] = now;
  if (++own_deletions_since_prune_ >= 1024) {
    own_deletions_since_prune_ = 0;
    std::erase_if(own_deletions_,
                  [&](const auto& kv) { return now - kv.second > kOwnDeletionMemory; });
  }
}

}  // namespace basalt::controllers
