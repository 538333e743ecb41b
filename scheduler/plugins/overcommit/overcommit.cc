#include "scheduler/plugins/overcommit/overcommit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "fmt/format.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class OvercommitPlugin final : public Plugin {
 public:
  explicit OvercommitPlugin(double factor) : factor_(factor) {}
  std::string_view Name() const override { return kOvercommitPluginName; }

  void OnSessionOpen(Session& ssn) override {
    Resource used;
    for (const auto& [name, node] : ssn.nodes()) used += node.used();
    // Capped so that llround stays defined for absurd factors (1e6 = a million times the cluster).
    const int64_t permille = std::llround(std::min(factor_, 1e6) * 1000);
    idle_ = ssn.total_resource().Scale(permille, 1000).SubFloorZero(used);
    for (const auto& [id, job] : ssn.jobs()) {
      if (!job.min_resources.has_value() || !job.never_fits.empty()) continue;
      // Admitted PodGroups of a queue that is gone (deleted with its jobs still terminating)
      // can never be placed: counting them would hold back every other queue's admission.
      if (ssn.FindQueue(job.queue) == nullptr) continue;
      const PodGroupPhase phase = job.podgroup_status.phase;
      if (phase == PodGroupPhase::kInqueue && job.tasks().empty()) {
        queues_[job.queue].podless += *job.min_resources;
      } else if (phase == PodGroupPhase::kInqueue ||
                 (phase == PodGroupPhase::kRunning && job.ReadyTaskNum() >= job.min_available)) {
        queues_[job.queue].inqueue += job.min_resources->SubFloorZero(job.allocated());
      }
    }
    ssn.AddJobEnqueueableFn(Name(), [this, &ssn](const JobInfo& job) {
      if (!job.min_resources.has_value()) return kPermit;
      if (!counted_ready_) CountAll(ssn);
      const bool podless = job.tasks().empty();
      const Resource wanted = (podless ? counted_all_ : counted_) + *job.min_resources;
      if (wanted.LessEqualOn(idle_, *job.min_resources)) return kPermit;
      if (ReclaimCanMakeRoom(ssn, job)) return kPermit;
      std::string dims;
      for (const auto& d : job.min_resources->Names()) {
        if (wanted.Get(d) > idle_.Get(d))
          dims += fmt::format("{}overused {}", dims.empty() ? "" : ", ", d);
      }
      if (JobInfo* j = ssn.FindJob(job.uid); j != nullptr) {
        j->job_fit_errors = fmt::format("resource in cluster is overused: {}", dims);
      }
      return kReject;
    });
    ssn.AddJobEnqueuedFn(Name(), [this, &ssn](const JobInfo& job) {
      if (!job.min_resources.has_value()) return;
      if (!counted_ready_) CountAll(ssn);
      QueueInqueue& q = queues_[job.queue];
      if (!q.headroom_known) Recount(ssn, job.queue, q);
      counted_ -= q.counted;
      counted_all_ -= q.counted_all;
      (job.tasks().empty() ? q.podless : q.inqueue) += *job.min_resources;
      Count(q);
      counted_ += q.counted;
      counted_all_ += q.counted_all;
    });
  }

 private:
  struct QueueInqueue {
    Resource inqueue;  // admitted minResources not yet allocated, of PodGroups with pods
    Resource podless;  // admitted minResources of PodGroups without any pod
    bool headroom_known = false;
    std::optional<Resource> headroom;  // Session::QueueHeadroom, read once
    Resource counted;                  // what of `inqueue` counts against the cluster
    Resource counted_all;              // what of `inqueue` + `podless` does
  };

  // Basalt: admitted work counts against the cluster only up to what its own queue may still be
  // allocated (its headroom, e.g. deserved - allocated). The rest cannot be placed while the
  // queue is full, so counting it would hold back the other queues' admission while those GPUs
  // sit idle: the stranding of issue 14. Volcano counts every Inqueue PodGroup.
  // Admitted PodGroups without pods count (`counted_all`) only against candidates without pods:
  // a flood of vcjobs, whose pods are created once admitted, is admitted at the cluster's pace
  // as in Volcano, but pods that may never come (a bare pod deleted with its node, a hand-made
  // PodGroup without pods) never keep a job whose pods exist from being admitted.
  static Resource Capped(const QueueInqueue& q, const Resource& admitted) {
    if (!q.headroom.has_value()) return admitted;
    return admitted.Min(q.headroom->SubFloorZero(Resource()), MissingAs::kInfinity);
  }
  static void Count(QueueInqueue& q) {
    q.counted = Capped(q, q.inqueue);
    q.counted_all = Capped(q, q.inqueue + q.podless);
  }

  // Basalt (Volcano #4679): on a cluster other queues filled, a job larger than the headroom
  // would never be admitted, and reclaim, which serves admitted jobs only, would never make
  // room for it. So when reclaim is configured, a job whose queue may still be allocated it
  // (within its share, after the queue's other admitted work) is admitted: reclaim takes that
  // share back from the borrowers. Without reclaim nothing could free room, and the rule above
  // stands.
  bool ReclaimCanMakeRoom(const Session& ssn, const JobInfo& job) {
    if (!ssn.config().HasAction("reclaim") && !ssn.config().HasAction("gangreclaim")) {
      return false;
    }
    QueueInqueue& q = queues_[job.queue];
    if (!q.headroom_known) Recount(ssn, job.queue, q);
    if (!q.headroom.has_value()) return false;  // no plugin knows the queue's share
    const Resource admitted = job.tasks().empty() ? q.inqueue + q.podless : q.inqueue;
    return (admitted + *job.min_resources)
        .LessEqualOn(*q.headroom, *job.min_resources, MissingAs::kInfinity);
  }

  void Recount(const Session& ssn, const std::string& name, QueueInqueue& q) {
    const QueueInfo* queue = ssn.FindQueue(name);
    q.headroom = queue != nullptr ? ssn.QueueHeadroom(*queue) : std::nullopt;
    q.headroom_known = true;
    Count(q);
  }

  // Lazily, at the first admission question: the plugins that give headrooms (proportion,
  // capacity) may open after this one.
  void CountAll(const Session& ssn) {
    counted_ = Resource();
    counted_all_ = Resource();
    for (auto& [name, q] : queues_) {
      Recount(ssn, name, q);
      counted_ += q.counted;
      counted_all_ += q.counted_all;
    }
    counted_ready_ = true;
  }

  double factor_;
  Resource idle_;
  std::map<std::string, QueueInqueue> queues_;
  bool counted_ready_ = false;
  Resource counted_;      // sum of QueueInqueue::counted
  Resource counted_all_;  // sum of QueueInqueue::counted_all
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewOvercommitPlugin(const Arguments& args) {
  auto factor = args.GetFloat("overcommit-factor", kDefaultOvercommitFactor);
  if (!factor.ok()) return factor.status();
  double f = *factor < 1.0 ? kDefaultOvercommitFactor : *factor;
  return std::make_unique<OvercommitPlugin>(f);
}

}  // namespace basalt::sched
