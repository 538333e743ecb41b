#include "scheduler/plugins/drf/drf.h"

#include <algorithm>
#include <cmath>

#include "scheduler/framework/session.h"

namespace basalt::sched {

namespace {
double Ratio(int64_t a, int64_t t) {
  if (t == 0) return a == 0 ? 0.0 : 1.0;
  return static_cast<double>(a) / static_cast<double>(t);
}
}  // namespace

double DrfShare(const Resource& allocated, const Resource& total) {
  double share = std::max(Ratio(allocated.milli_cpu(), total.milli_cpu()),
                          Ratio(allocated.memory(), total.memory()));
  for (const auto& [name, t] : total.scalars())
    share = std::max(share, Ratio(allocated.Get(name), t));
  return share;
}

namespace {

constexpr double kShareDelta = 1e-6;

class DrfPlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kDrfPluginName; }

  void OnSessionOpen(Session& ssn) override {
    total_ = ssn.total_resource();
    for (const auto& [id, job] : ssn.jobs()) {
      Attr& a = jobs_[id];
      a.allocated = job.allocated();
      a.share = DrfShare(a.allocated, total_);
    }
    ssn.AddJobOrderFn(Name(), [this](const JobInfo& l, const JobInfo& r) {
      double ls = Share(l.uid);
      double rs = Share(r.uid);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddPreemptableFn(
        Name(),
        [this](const TaskInfo& preemptor, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          Resource preemptor_alloc = jobs_[preemptor.job_id].allocated + preemptor.resreq;
          double preemptor_share = DrfShare(preemptor_alloc, total_);
          std::map<std::string, Resource> victim_alloc;
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* t : candidates) {
            auto [it, inserted] = victim_alloc.emplace(t->job_id, jobs_[t->job_id].allocated);
            Resource after = it->second - t->resreq;
            double victim_share = DrfShare(after, total_);
            if (preemptor_share <= victim_share + kShareDelta) {
              it->second = after;
              victims.push_back(t);
            }
          }
          return victims;
        });
    ssn.AddEventHandler(
        EventHandler{[this](const TaskInfo& t) { Update(t.job_id, t.resreq, +1); },
                     [this](const TaskInfo& t) { Update(t.job_id, t.resreq, -1); }});
  }

 private:
  struct Attr {
    Resource allocated;
    double share = 0;
  };
  double Share(const std::string& job) const {
    auto it = jobs_.find(job);
    return it == jobs_.end() ? 0.0 : it->second.share;
  }
  void Update(const std::string& job, const Resource& req, int sign) {
    Attr& a = jobs_[job];
    if (sign > 0) {
      a.allocated += req;
    } else {
      a.allocated -= req;
    }
    a.share = DrfShare(a.allocated, total_);
  }

  Resource total_;
  std::map<std::string, Attr> jobs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewDrfPlugin(const Arguments&) {
  return std::make_unique<DrfPlugin>();
}

}  // namespace basalt::sched
