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
      // Admitted with no pod: a promise, not work (see the header comment).
      const bool podless = phase == PodGroupPhase::kInqueue && job.tasks().empty();
      if (job.min_resources.has_value()) {
        if (may_run && !podless &&
            (phase == PodGroupPhase::kPending || phase == PodGroupPhase::kInqueue)) {
          demand = demand.Max(*job.min_resources);  // Basalt: see the header comment
        }
        if (may_run && podless) {
          a.podless += *job.min_resources;
        } else if (may_run && (phase == PodGroupPhase::kInqueue ||
                               (phase == PodGroupPhase::kRunning &&
                                job.ReadyTaskNum() >= job.min_available))) {
          a.inqueue += job.min_resources->SubFloorZero(job.allocated());
        }
        a.elastic += job.allocated().SubFloorZero(*job.min_resources);
      }
      a.request += demand;
      if (may_run) AddFirstUnit(job, a);
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
    // What queues whose next unit of work fits in their deserved share (and in the idle cluster)
    // still have to take is theirs: work past deserved may use only the rest (see Allocatable).
    total_ = total;
    for (const auto& [name, a] : queues_) sum_allocated_ += a.allocated;
    const Resource idle = total.SubFloorZero(sum_allocated_);
    for (auto& [name, a] : queues_) {
      const Resource remaining = a.deserved.SubFloorZero(a.allocated);
      for (const Resource& unit : a.first_units) {
        if (unit.LessEqualOn(remaining, unit) && unit.LessEqualOn(idle, unit)) {
          a.claims = true;
          break;
        }
      }
      a.first_units.clear();
      if (a.claims) {
        a.claimed = remaining;
        sum_claimed_ += remaining;
      }
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
    ssn.AddAllocatableFn(Name(), [this, &ssn, fits](const QueueInfo& q, const TaskInfo& task) {
      if (fits(q, task)) return true;
      auto it = queues_.find(q.name);
      if (q.state != QueueState::kOpen || it == queues_.end()) return false;
      return MayStartPastDeserved(ssn, it->second, task);
    });
    // Reclaim takes back only what the queue deserves: a queue never evicts others' pods to run
    // past its share.
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
      // Admitted PodGroups without pods hold back only other PodGroups without pods (a flood of
      // vcjobs, whose pods come once admitted, is still admitted at the queue's pace); a job
      // whose pods exist is not kept waiting for pods that may never come.
      const Resource inqueue = job.tasks().empty() ? a.inqueue + a.podless : a.inqueue;
      const Resource held = (a.allocated + inqueue).SubFloorZero(a.elastic);
      const Resource wanted = held + min_req;
      JobInfo* mutable_job = ssn.FindJob(job.uid);
      if (!wanted.LessEqualOn(a.real_capability, min_req, MissingAs::kInfinity)) {
        std::string dims;
        for (const auto& d : ShortDims(wanted, a.real_capability, min_req)) {
          if (!dims.empty()) dims += ", ";
          dims +=
              fmt::format("insufficient {} (requested {}, allocated {}, inqueue {}, capability {})",
                          d, FormatQuantity(d, min_req.Get(d)),
                          FormatQuantity(d, a.allocated.Get(d)), FormatQuantity(d, inqueue.Get(d)),
                          FormatQuantity(d, a.real_capability.Has(d) ? a.real_capability.Get(d)
                                                                     : Resource::kUnbounded));
        }
        if (mutable_job != nullptr) {
          mutable_job->job_fit_errors =
              fmt::format("queue {} resource quota insufficient: {}", job.queue, dims);
        }
        return kReject;
      }
      // Basalt: fair admission (see the header comment).
      // A queue that runs nothing of a dimension may still admit gangs asking for it, even when
      // its share rounds below one gang or its admitted gangs do not fit the idle nodes
      // (Allocatable lets one gang start past the share on idle resources).
      for (const auto& d : min_req.Names()) {
        if (a.allocated.Get(d) > 0 && held.Get(d) >= a.deserved.Get(d) &&
            a.deserved.Get(d) < a.request.Get(d)) {
          if (mutable_job != nullptr) {
            mutable_job->job_fit_errors = fmt::format(
                "queue {} has reached its fair share of {} (deserved {}, allocated {}, inqueue {})",
                job.queue, d, FormatQuantity(d, a.deserved.Get(d)),
                FormatQuantity(d, a.allocated.Get(d)), FormatQuantity(d, inqueue.Get(d)));
          }
          return kReject;
        }
      }
      return kPermit;
    });
    ssn.AddJobEnqueuedFn(Name(), [this](const JobInfo& job) {
      if (!job.min_resources.has_value()) return;
      auto it = queues_.find(job.queue);
      if (it == queues_.end()) return;
      (job.tasks().empty() ? it->second.podless : it->second.inqueue) += *job.min_resources;
    });
    ssn.AddEventHandler(EventHandler{[this, &ssn](const TaskInfo& t) { Update(ssn, t, +1); },
                                     [this, &ssn](const TaskInfo& t) { Update(ssn, t, -1); }});
  }

  // For the metrics (volcano_queue_deserved_*, _real_capacity_*, volcano_queue_share).
  void OnSessionClose(Session& ssn) override {
    for (const auto& [name, a] : queues_) {
      ssn.ReportQueue(name, QueueShareReport{a.deserved, a.real_capability, a.guarantee, a.share});
    }
  }

 private:
  struct Attr {
    Resource deserved;
    Resource allocated;
    Resource request;
    Resource inqueue;  // admitted minResources not yet allocated, of PodGroups with pods
    Resource podless;  // admitted minResources of PodGroups without any pod
    Resource elastic;
    Resource real_capability;
    Resource guarantee;
    double share = 0;
    // Session open only: per pending job, what it needs to make progress (the rest of its gang
    // minimum, or its smallest pending task).
    std::vector<Resource> first_units;
    // True if the queue can use the rest of its deserved share now: `claimed` (= deserved -
    // allocated, kept in step) is then not idle for other queues' work past their shares.
    bool claims = false;
    Resource claimed;
  };

  static void AddFirstUnit(const JobInfo& job, Attr& a) {
    const TaskInfo* smallest = nullptr;
    for (const auto& [uid, t] : job.TasksWithStatus(TaskStatus::kPending)) {
      if (job.never_fit_tasks.count(uid) != 0 || t->BestEffort()) continue;
      if (smallest == nullptr || t->resreq.LessEqual(smallest->resreq)) smallest = t;
    }
    if (smallest == nullptr) return;
    if (job.ReadyTaskNum() + job.WaitingTaskNum() < job.min_available &&
        job.min_resources.has_value()) {
      a.first_units.push_back(job.min_resources->SubFloorZero(job.allocated()));
    } else {
      a.first_units.push_back(smallest->resreq);
    }
  }

  // Basalt (issue 14, Deliver 3): deserved is not a ceiling below one unit of work. A task that
  // would take the queue past its deserved share is still allowed when
  //  * its job has not reached its gang minimum (one task when minAvailable is 1): the queue
  //    starts at most one gang past its share, and its pods past deserved stay reclaimable;
  //  * without that job, the queue holds less than its deserved share, or nothing, in every
  //    dimension it would exceed (it is under its share);
  //  * the queue's real capability holds;
  //  * what goes past deserved is idle: not held by any queue, not freed by an eviction of this
  //    session, nor the rest of the deserved share of a queue that has work fitting in it.
  // Without this, N queues whose shares each round below one gang leave the whole cluster idle.
  bool MayStartPastDeserved(const Session& ssn, const Attr& a, const TaskInfo& task) const {
    const JobInfo* job = ssn.FindJob(task.job_id);
    if (job == nullptr) return false;
    if (job->ReadyTaskNum() + job->WaitingTaskNum() >= std::max<int32_t>(job->min_available, 1))
      return false;
    Resource job_held = job->allocated();
    for (const auto& [uid, t] : job->TasksWithStatus(TaskStatus::kPipelined)) job_held += t->resreq;
    const Resource base = a.allocated.SubFloorZero(job_held);
    const Resource future = a.allocated + task.resreq;
    for (const auto& d : task.resreq.Names()) {
      if (future.Get(d) <= a.deserved.Get(d)) continue;
      if (base.Get(d) > 0 && base.Get(d) >= a.deserved.Get(d)) return false;
    }
    if (!future.LessEqualOn(a.real_capability, task.resreq, MissingAs::kInfinity)) return false;
    // The part of this task past deserved (the job's earlier tasks already took theirs).
    const Resource past =
        future.SubFloorZero(a.deserved).SubFloorZero(a.allocated.SubFloorZero(a.deserved));
    const Resource spare =
        total_.SubFloorZero(sum_allocated_).SubFloorZero(released_).SubFloorZero(sum_claimed_);
    return past.LessEqualOn(spare, past);
  }

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
      sum_allocated_ += t.resreq;
      // An eviction undone (the task back Running or Bound).
      if (t.status == TaskStatus::kRunning || t.status == TaskStatus::kBound) released_ -= t.resreq;
    } else {
      a.allocated -= t.resreq;
      sum_allocated_ -= t.resreq;
      if (t.status == TaskStatus::kReleasing) released_ += t.resreq;  // evicted
    }
    a.share = QueueShare(a.allocated, a.deserved);
    if (a.claims) {
      sum_claimed_ -= a.claimed;
      a.claimed = a.deserved.SubFloorZero(a.allocated);
      sum_claimed_ += a.claimed;
    }
  }

  std::map<std::string, Attr> queues_;
  Resource total_;
  Resource sum_allocated_;  // over queues_
  Resource sum_claimed_;    // over queues_ that claim
  // Freed by this session's evictions: never idle for work past a share, so that reclaim and
  // preempt do not evict for it (they make room only within deserved).
  Resource released_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewProportionPlugin(const Arguments&) {
  return std::make_unique<ProportionPlugin>();
}

}  // namespace basalt::sched
