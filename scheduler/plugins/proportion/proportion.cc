#include "scheduler/plugins/proportion/proportion.h"

#include <algorithm>

#include "fmt/format.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

Resource RealCapability(const Resource& total, const Resource& all_guarantees,
                        const Resource& guarantee, const std::optional<Resource>& capability) {
  Resource real = total.SubFloorZero(all_guarantees) + guarantee;
  if (!capability.has_value()) return real;
  Resource cap = *capability;
  if (cap.milli_cpu() <= 0) cap.SetMilliCpu(Resource::kUnbounded);
  if (cap.memory() <= 0) cap.SetMemory(Resource::kUnbounded);
  return real.Min(cap, MissingAs::kInfinity);
}

namespace {

// Basalt: a fractional share of a whole-unit resource (1.5 GPUs) lets the queue place only the
// whole part, and the fraction is lost to every queue. Each whole-unit dimension is rounded down
// per queue and the units left over go to the largest remainders (then the heavier queue, then
// the name), within each queue's request and real capability, so that the shares are whole and
// sum to the water-filled total rounded to the nearest unit.
void RoundWholeUnits(const Resource& total, const std::vector<QueueDemand>& queues,
                     std::map<std::string, Resource>& deserved) {
  constexpr int64_t kUnit = 1000;
  for (const auto& [dim, total_value] : total.scalars()) {
    if (!IsWholeUnitResource(dim)) continue;
    int64_t sum = 0;
    int64_t floors = 0;
    struct Remainder {
      int64_t remainder;
      int32_t weight;
      const QueueDemand* queue;
    };
    std::vector<Remainder> remainders;
    for (const auto& q : queues) {
      const int64_t v = deserved[q.name].Get(dim);
      sum = SaturatingAdd(sum, v);
      floors = SaturatingAdd(floors, v / kUnit * kUnit);
      if (v % kUnit != 0) remainders.push_back(Remainder{v % kUnit, q.weight, &q});
    }
    if (remainders.empty()) continue;
    const int64_t target = std::min((sum + kUnit / 2) / kUnit, total_value / kUnit) * kUnit;
    int64_t extra = std::max<int64_t>(target - floors, 0) / kUnit;
    std::sort(remainders.begin(), remainders.end(), [](const Remainder& l, const Remainder& r) {
      if (l.remainder != r.remainder) return l.remainder > r.remainder;
      if (l.weight != r.weight) return l.weight > r.weight;
      return l.queue->name < r.queue->name;
    });
    for (const auto& r : remainders) {
      Resource& d = deserved[r.queue->name];
      const int64_t down = d.Get(dim) / kUnit * kUnit;
      const int64_t cap =
          std::min(r.queue->request.Get(dim), r.queue->real_capability.Has(dim)
                                                  ? r.queue->real_capability.Get(dim)
                                                  : Resource::kUnbounded);
      if (extra > 0 && down + kUnit <= cap) {
        d.Set(dim, down + kUnit);
        --extra;
      } else {
        d.Set(dim, std::max(down, r.queue->guarantee.Get(dim)));
      }
    }
  }
}

}  // namespace

std::map<std::string, Resource> ComputeDeserved(const Resource& total,
                                                const std::vector<QueueDemand>& queues) {
  std::map<std::string, Resource> deserved;
  std::map<std::string, bool> met;
  for (const auto& q : queues) {
    deserved[q.name] = Resource();
    met[q.name] = false;
  }
  Resource remaining = total;
  while (true) {
    int64_t total_weight = 0;
    for (const auto& q : queues) {
      if (!met[q.name]) total_weight += q.weight;
    }
    if (total_weight == 0) break;
    const Resource old_remaining = remaining;
    Resource increased;
    Resource decreased;
    for (const auto& q : queues) {
      if (met[q.name]) continue;
      const Resource old = deserved[q.name];
      Resource d = old + remaining.Scale(q.weight, total_weight);
      d = d.Min(q.real_capability, MissingAs::kInfinity);
      d = d.Min(q.request, MissingAs::kZero);
      d = d.Max(q.guarantee);
      if (q.request.LessEqual(d) || d == old) met[q.name] = true;
      increased += d.SubFloorZero(old);
      decreased += old.SubFloorZero(d);
      deserved[q.name] = d;
    }
    remaining = (remaining + decreased).SubFloorZero(increased);
    if (remaining.IsEmpty() || remaining == old_remaining) break;
  }
  RoundWholeUnits(total, queues, deserved);
  return deserved;
}

namespace {
double Ratio(int64_t a, int64_t d) {
  if (d == 0) return a == 0 ? 0.0 : 1.0;
  return static_cast<double>(a) / static_cast<double>(d);
}
}  // namespace

double QueueShare(const Resource& allocated, const Resource& deserved) {
  double share = std::max(Ratio(allocated.milli_cpu(), deserved.milli_cpu()),
                          Ratio(allocated.memory(), deserved.memory()));
  for (const auto& [name, d] : deserved.scalars())
    share = std::max(share, Ratio(allocated.Get(name), d));
  // Basalt also counts dimensions the queue holds but does not deserve (x/0 = 1); Volcano looks
  // only at the dimensions of deserved, which makes such a queue look unserved.
  for (const auto& [name, a] : allocated.scalars())
    share = std::max(share, Ratio(a, deserved.Get(name)));
  return share;
}

namespace {

// Dimensions of `dims` (non-zero) in which `used` has reached `limit`, for messages.
std::vector<std::string> ShortDims(const Resource& used, const Resource& limit,
                                   const Resource& dims) {
  std::vector<std::string> out;
  for (const auto& name : dims.Names()) {
    if (used.Get(name) > (limit.Has(name) ? limit.Get(name) : Resource::kUnbounded))
      out.push_back(name);
  }
  return out;
}

class ProportionPlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kProportionPluginName; }

  void OnSessionOpen(Session& ssn) override {
    const Resource& total = ssn.total_resource();
    Resource all_guarantees;
    for (const auto& [name, q] : ssn.queues()) all_guarantees += q.guarantee;

    for (const auto& [id, job] : ssn.jobs()) {
      const QueueInfo* queue = ssn.FindQueue(job.queue);
      if (queue == nullptr) continue;
      auto [it, inserted] = queues_.try_emplace(queue->name);
      Attr& a = it->second;
      if (inserted) {
        a.guarantee = queue->guarantee;
        a.real_capability =
            RealCapability(total, all_guarantees, queue->guarantee, queue->capability);
      }
      a.allocated += job.allocated();
      Resource demand = job.allocated();
      // What can never be placed is no demand (feasibility.h): it would inflate the queue's
      // deserved share, or reserve queue capacity at admission, for nothing.
      const bool may_run = job.never_fits.empty();
      if (may_run) {
        for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
          if (job.never_fit_tasks.count(uid) == 0) demand += t->resreq;
        }
      }
      const PodGroupPhase phase = job.podgroup_status.phase;
      if (job.min_resources.has_value()) {
        if (may_run && (phase == PodGroupPhase::kPending || phase == PodGroupPhase::kInqueue)) {
          demand = demand.Max(*job.min_resources);  // Basalt: see the header comment
        }
        if (may_run &&
            (phase == PodGroupPhase::kInqueue ||
             (phase == PodGroupPhase::kRunning && job.ReadyTaskNum() >= job.min_available))) {
          a.inqueue += job.min_resources->SubFloorZero(job.allocated());
        }
        a.elastic += job.allocated().SubFloorZero(*job.min_resources);
      }
      a.request += demand;
    }
    std::vector<QueueDemand> demands;
    for (const auto& [name, a] : queues_) {
      demands.push_back(QueueDemand{name, ssn.FindQueue(name)->weight, a.request, a.real_capability,
                                    a.guarantee});
    }
    for (auto& [name, d] : ComputeDeserved(total, demands)) {
      Attr& a = queues_[name];
      a.deserved = d;
      a.share = QueueShare(a.allocated, a.deserved);
    }

    ssn.AddQueueOrderFn(Name(), [this](const QueueInfo& l, const QueueInfo& r) {
      if (l.priority != r.priority) return l.priority > r.priority ? -1 : 1;
      double ls = ShareOf(l.name);
      double rs = ShareOf(r.name);
      if (ls == rs) return 0;
      return ls < rs ? -1 : 1;
    });
    ssn.AddOverusedFn(Name(), [this](const QueueInfo& q) {
      auto it = queues_.find(q.name);
      if (it == queues_.end()) return false;
      return it->second.deserved.LessEqual(it->second.allocated);
    });
    ssn.AddQueueHeadroomFn(Name(), [this](const QueueInfo& q) -> std::optional<Resource> {
      auto it = queues_.find(q.name);
      if (it == queues_.end()) return std::nullopt;
      return it->second.deserved.SubFloorZero(it->second.allocated);
    });
    auto fits = [this](const QueueInfo& q, const TaskInfo& task) {
      if (q.state != QueueState::kOpen) return false;
      auto it = queues_.find(q.name);
      if (it == queues_.end()) return false;
      return (it->second.allocated + task.resreq).LessEqualOn(it->second.deserved, task.resreq);
    };
    ssn.AddAllocatableFn(Name(), fits);
    ssn.AddPreemptiveFn(Name(), fits);
    ssn.AddReclaimableFn(
        Name(),
        [this, &ssn](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
            -> std::optional<std::vector<const TaskInfo*>> {
          std::map<std::string, Resource> allocated;
          std::vector<const TaskInfo*> victims;
          for (const TaskInfo* t : candidates) {
            const JobInfo* job = ssn.FindJob(t->job_id);
            if (job == nullptr) continue;
            auto qa = queues_.find(job->queue);
            if (qa == queues_.end()) continue;
            auto [it, inserted] = allocated.emplace(job->queue, qa->second.allocated);
            if (!it->second.LessEqual(qa->second.deserved)) {
              it->second -= t->resreq;
              victims.push_back(t);
            }
          }
          return victims;
        });
    ssn.AddJobEnqueueableFn(Name(), [this, &ssn](const JobInfo& job) {
      const QueueInfo* queue = ssn.FindQueue(job.queue);
      if (queue == nullptr || queue->state != QueueState::kOpen) return kReject;
      if (!job.min_resources.has_value()) return kPermit;
      auto it = queues_.find(job.queue);
      if (it == queues_.end()) return kPermit;
      const Attr& a = it->second;
      const Resource& min_req = *job.min_resources;
      const Resource held = (a.allocated + a.inqueue).SubFloorZero(a.elastic);
      const Resource wanted = held + min_req;
      JobInfo* mutable_job = ssn.FindJob(job.uid);
      if (!wanted.LessEqualOn(a.real_capability, min_req, MissingAs::kInfinity)) {
        std::string dims;
        for (const auto& d : ShortDims(wanted, a.real_capability, min_req)) {
          if (!dims.empty()) dims += ", ";
          dims += fmt::format(
              "insufficient {} (requested {}, allocated {}, inqueue {}, capability {})", d,
              FormatQuantity(d, min_req.Get(d)), FormatQuantity(d, a.allocated.Get(d)),
              FormatQuantity(d, a.inqueue.Get(d)),
              FormatQuantity(
                  d, a.real_capability.Has(d) ? a.real_capability.Get(d) : Resource::kUnbounded));
        }
        if (mutable_job != nullptr) {
          mutable_job->job_fit_errors =
              fmt::format("queue {} resource quota insufficient: {}", job.queue, dims);
        }
        return kReject;
      }
      // Basalt: fair admission (see the header comment).
      for (const auto& d : min_req.Names()) {
        if (held.Get(d) >= a.deserved.Get(d) && a.deserved.Get(d) < a.request.Get(d)) {
          if (mutable_job != nullptr) {
            mutable_job->job_fit_errors = fmt::format(
                "queue {} has reached its fair share of {} (deserved {}, allocated {}, inqueue {})",
                job.queue, d, FormatQuantity(d, a.deserved.Get(d)),
                FormatQuantity(d, a.allocated.Get(d)), FormatQuantity(d, a.inqueue.Get(d)));
          }
          return kReject;
        }
      }
      return kPermit;
    });
    ssn.AddJobEnqueuedFn(Name(), [this](const JobInfo& job) {
      if (!job.min_resources.has_value()) return;
      auto it = queues_.find(job.queue);
      if (it != queues_.end()) it->second.inqueue += *job.min_resources;
    });
    ssn.AddEventHandler(EventHandler{[this, &ssn](const TaskInfo& t) { Update(ssn, t, +1); },
                                     [this, &ssn](const TaskInfo& t) { Update(ssn, t, -1); }});
  }

  // For the metrics (volcano_queue_deserved_*, _real_capacity_*, volcano_queue_share).
  void OnSessionClose(Session& ssn) override {
    for (const auto& [name, a] : queues_) {
      ssn.ReportQueue(name, QueueShareReport{a.deserved, a.real_capability, a.share});
    }
  }

 private:
  struct Attr {
    Resource deserved;
    Resource allocated;
    Resource request;
    Resource inqueue;
    Resource elastic;
    Resource real_capability;
    Resource guarantee;
    double share = 0;
  };

  double ShareOf(const std::string& queue) const {
    auto it = queues_.find(queue);
    return it == queues_.end() ? 0.0 : it->second.share;
  }

  void Update(Session& ssn, const TaskInfo& t, int sign) {
    const JobInfo* job = ssn.FindJob(t.job_id);
    if (job == nullptr) return;
    auto it = queues_.find(job->queue);
    if (it == queues_.end()) return;
    Attr& a = it->second;
    if (sign > 0) {
      a.allocated += t.resreq;
    } else {
      a.allocated -= t.resreq;
    }
    a.share = QueueShare(a.allocated, a.deserved);
  }

  std::map<std::string, Attr> queues_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewProportionPlugin(const Arguments&) {
  return std::make_unique<ProportionPlugin>();
}

}  // namespace basalt::sched
