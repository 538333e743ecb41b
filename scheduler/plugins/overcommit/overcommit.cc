#include "scheduler/plugins/overcommit/overcommit.h"

#include <algorithm>
#include <cmath>

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
      const PodGroupPhase phase = job.podgroup_status.phase;
      if (phase == PodGroupPhase::kInqueue ||
          (phase == PodGroupPhase::kRunning && job.ReadyTaskNum() >= job.min_available)) {
        inqueue_ += job.min_resources->SubFloorZero(job.allocated());
      }
    }
    ssn.AddJobEnqueueableFn(Name(), [this, &ssn](const JobInfo& job) {
      if (!job.min_resources.has_value()) return kPermit;
      const Resource wanted = inqueue_ + *job.min_resources;
      if (wanted.LessEqualOn(idle_, *job.min_resources)) return kPermit;
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
    ssn.AddJobEnqueuedFn(Name(), [this](const JobInfo& job) {
      if (job.min_resources.has_value()) inqueue_ += *job.min_resources;
    });
  }

 private:
  double factor_;
  Resource idle_;
  Resource inqueue_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewOvercommitPlugin(const Arguments& args) {
  auto factor = args.GetFloat("overcommit-factor", kDefaultOvercommitFactor);
  if (!factor.ok()) return factor.status();
  double f = *factor < 1.0 ? kDefaultOvercommitFactor : *factor;
  return std::make_unique<OvercommitPlugin>(f);
}

}  // namespace basalt::sched
