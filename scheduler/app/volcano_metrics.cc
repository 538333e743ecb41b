#include "scheduler/app/volcano_metrics.h"

#include <chrono>

namespace basalt::sched::app {
namespace {

// start, 2*start, ... (count boundaries), as Prometheus' ExponentialBuckets.
prometheus::Histogram::BucketBoundaries Exponential(double start, int count) {
  prometheus::Histogram::BucketBoundaries b;
  for (int i = 0; i < count; ++i, start *= 2) b.push_back(start);
  return b;
}

double Millis(std::chrono::nanoseconds d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

prometheus::Family<prometheus::Gauge>& Gauge(prometheus::Registry& r, const std::string& name,
                                             const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

double UnixSeconds(Timestamp t) {
  // Whole seconds, as Volcano's (time.Unix()).
  return static_cast<double>(
      std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count());
}

std::string JobKey(const std::string& ns, const std::string& name) { return ns + "/" + name; }

}  // namespace

VolcanoMetrics::VolcanoMetrics(prometheus::Registry& registry)
    : e2e_latency_(prometheus::BuildHistogram()
                       .Name("volcano_e2e_scheduling_latency_milliseconds")
                       .Help("E2e scheduling latency in milliseconds (one scheduling cycle: "
                             "session open, actions, close)")
                       .Register(registry)
                       .Add({}, Exponential(5, 15))),
      job_latency_(prometheus::BuildHistogram()
                       .Name("volcano_e2e_job_scheduling_latency_milliseconds")
                       .Help("E2e job scheduling latency in milliseconds (PodGroup creation to "
                             "the cycle that placed its gang)")
                       .Register(registry)
                       .Add({}, Exponential(32, 10))),
      job_duration_(Gauge(registry, "volcano_e2e_job_scheduling_duration",
                          "E2E job scheduling duration in milliseconds (PodGroup creation to "
                          "the cycle that placed its gang)")),
      job_start_time_(Gauge(registry, "volcano_e2e_job_scheduling_start_time",
                            "E2E job scheduling start time (the PodGroup's creation, Unix "
                            "seconds)")),
      job_last_time_(Gauge(registry, "volcano_e2e_job_scheduling_last_time",
                           "E2E job scheduling last time (the cycle that placed its gang, Unix "
                           "seconds)")),
      job_share_(Gauge(registry, "volcano_job_share",
                       "Share for one job (drf's dominant resource share)")),
      plugin_latency_(prometheus::BuildHistogram()
                          .Name("volcano_plugin_scheduling_latency_milliseconds")
                          .Help("Plugin scheduling latency in milliseconds")
                          .Register(registry)),
      action_latency_(prometheus::BuildHistogram()
                          .Name("volcano_action_scheduling_latency_milliseconds")
                          .Help("Action scheduling latency in milliseconds")
                          .Register(registry)),
      task_latency_(prometheus::BuildHistogram()
                        .Name("volcano_task_scheduling_latency_milliseconds")
                        .Help("Task scheduling latency in milliseconds (pod creation to the "
                              "cycle that sent it to bind)")
                        .Register(registry)
                        .Add({}, Exponential(5, 15))),
      attempts_(prometheus::BuildCounter()
                    .Name("volcano_schedule_attempts_total")
                    .Help("Number of attempts to schedule pods, by the result. 'unschedulable' "
                          "means a pod could not be scheduled, while 'error' means an internal "
                          "scheduler problem (a refused bind)")
                    .Register(registry)),
      attempts_scheduled_(attempts_.Add({{"result", "scheduled"}})),
      attempts_unschedulable_(attempts_.Add({{"result", "unschedulable"}})),
      attempts_error_(attempts_.Add({{"result", "error"}})),
      task_operation_(prometheus::BuildHistogram()
                          .Name("volcano_task_operation_latency_milliseconds")
                          .Help("Task operation latency in milliseconds (operation bind: the "
                                "POST pods/binding to the API server's answer)")
                          .Register(registry)),
      bind_ok_latency_(
          task_operation_.Add({{"operation", "bind"}, {"result", "success"}}, Exponential(5, 15))),
      bind_error_latency_(
          task_operation_.Add({{"operation", "bind"}, {"result", "error"}}, Exponential(5, 15))),
      preemption_victims_(Gauge(registry, "volcano_pod_preemption_victims",
                                "Number of selected preemption victims (preempt and reclaim, "
                                "last cycle)")
                              .Add({})),
      preemption_attempts_(prometheus::BuildCounter()
                               .Name("volcano_total_preemption_attempts")
                               .Help("Total preemption attempts in the cluster till now")
                               .Register(registry)
                               .Add({})),
      unschedule_task_count_(Gauge(registry, "volcano_unschedule_task_count",
                                   "Number of tasks could not be scheduled")),
      unschedule_job_count_(
          Gauge(registry, "volcano_unschedule_job_count", "Number of jobs could not be scheduled")
              .Add({})),
      job_retry_counts_(prometheus::BuildCounter()
                            .Name("volcano_job_retry_counts")
                            .Help("Number of retry counts for one job (cycles that left it "
                                  "unschedulable)")
                            .Register(registry)),
      allocated_(BuildResourceGauges(registry, "allocated", "Allocated")),
      request_(BuildResourceGauges(registry, "request", "Request")),
      deserved_(BuildResourceGauges(registry, "deserved", "Deserved")),
      capacity_(BuildResourceGauges(registry, "capacity", "Capacity")),
      real_capacity_(BuildResourceGauges(registry, "real_capacity", "Real capacity")),
      queue_share_(Gauge(registry, "volcano_queue_share", "Share for one queue")),
      queue_weight_(Gauge(registry, "volcano_queue_weight", "Weight for one queue")),
      queue_overused_(Gauge(registry, "volcano_queue_overused", "If one queue is overused")) {}

VolcanoMetrics::ResourceGauges VolcanoMetrics::BuildResourceGauges(prometheus::Registry& registry,
                                                                   const std::string& what,
                                                                   const std::string& help) {
  return ResourceGauges{
      &Gauge(registry, "volcano_queue_" + what + "_milli_cpu", help + " CPU count for one queue"),
      &Gauge(registry, "volcano_queue_" + what + "_memory_bytes", help + " memory for one queue"),
      &Gauge(registry, "volcano_queue_" + what + "_scalar_resources",
             help + " scalar resources for one queue (milli-units, as Volcano)")};
}

void VolcanoMetrics::SetQueueResource(const ResourceGauges& g, const std::string& queue,
                                      const Resource& r) {
  g.milli_cpu->Add({{"queue_name", queue}}).Set(static_cast<double>(r.milli_cpu()));
  g.memory->Add({{"queue_name", queue}}).Set(static_cast<double>(r.memory()));
  // A resource the queue had and no longer has reads 0 rather than its last value.
  std::set<std::string>& known = queue_scalars_[{g.scalars, queue}];
  for (const auto& [name, v] : r.scalars()) known.insert(name);
  for (const std::string& name : known) {
    g.scalars->Add({{"queue_name", queue}, {"resource", name}})
        .Set(static_cast<double>(r.Get(name)));
  }
}

void VolcanoMetrics::RemoveQueue(const std::string& queue) {
  const prometheus::Labels labels{{"queue_name", queue}};
  for (const ResourceGauges* g :
       {&allocated_, &request_, &deserved_, &capacity_, &real_capacity_}) {
    g->milli_cpu->Remove(&g->milli_cpu->Add(labels));
    g->memory->Remove(&g->memory->Add(labels));
    auto it = queue_scalars_.find({g->scalars, queue});
    if (it == queue_scalars_.end()) continue;
    for (const std::string& name : it->second) {
      g->scalars->Remove(&g->scalars->Add({{"queue_name", queue}, {"resource", name}}));
    }
    queue_scalars_.erase(it);
  }
  for (auto* f : {&queue_share_, &queue_weight_, &queue_overused_}) f->Remove(&f->Add(labels));
}

void VolcanoMetrics::ObserveCycle(const CycleReport& report, const ClusterInfo& cluster) {
  std::lock_guard<std::mutex> l(mu_);
  e2e_latency_.Observe(Millis(report.total));
  for (const auto& a : report.actions) {
    action_latency_.Add({{"action", a.name}}, Exponential(5, 15)).Observe(Millis(a.duration));
  }
  for (const auto& p : report.plugins) {
    plugin_latency_
        .Add({{"plugin", p.name}, {"OnSession", p.open ? "OnSessionOpen" : "OnSessionClose"}},
             Exponential(5, 15))
        .Observe(Millis(p.duration));
  }
  for (const auto& d : report.task_latencies) task_latency_.Observe(Millis(d));
  attempts_scheduled_.Increment(static_cast<double>(report.tasks_dispatched));
  preemption_victims_.Set(static_cast<double>(report.evictions));
  preemption_attempts_.Increment(static_cast<double>(report.preemption_attempts));

  // Jobs left unschedulable this cycle. The job_id label is the PodGroup's name alone, as
  // Volcano's: jobs of one name in two namespaces share (and add up in) one series.
  std::map<std::string, int64_t> tasks_by_name;
  int64_t unschedulable_tasks = 0;
  for (const auto& j : report.unschedulable_jobs) {
    tasks_by_name[j.name] += j.unschedulable_tasks;
    unschedulable_tasks += j.unschedulable_tasks;
    JobSeries& r = retries_[j.name];
    if (r.counter == nullptr) r.counter = &job_retry_counts_.Add({{"job_id", j.name}});
    r.keys.insert(JobKey(j.namespace_name, j.name));
    r.counter->Increment();
  }
  for (const std::string& name : unschedulable_names_) {
    if (tasks_by_name.count(name) == 0) {
      unschedule_task_count_.Remove(&unschedule_task_count_.Add({{"job_id", name}}));
    }
  }
  unschedulable_names_.clear();
  for (const auto& [name, n] : tasks_by_name) {
    unschedule_task_count_.Add({{"job_id", name}}).Set(static_cast<double>(n));
    unschedulable_names_.insert(name);
  }
  unschedule_job_count_.Set(static_cast<double>(report.unschedulable_jobs.size()));
  attempts_unschedulable_.Increment(static_cast<double>(unschedulable_tasks));
  for (const auto& j : report.scheduled_jobs) {
    job_latency_.Observe(Millis(j.since_creation));
    const prometheus::Labels labels{
        {"job_name", j.name}, {"queue", j.queue}, {"job_namespace", j.namespace_name}};
    PlacedJob& p = job_durations_[JobKey(j.namespace_name, j.name)];
    p.duration = &job_duration_.Add(labels);
    p.duration->Set(Millis(j.since_creation));
    p.start_time = &job_start_time_.Add(labels);
    p.start_time->Set(UnixSeconds(j.created));
    p.last_time = &job_last_time_.Add(labels);
    p.last_time->Set(UnixSeconds(j.placed));
  }
  // volcano_job_share: the jobs reported this cycle; the others' series go.
  std::map<std::string, prometheus::Gauge*> shares;
  for (const auto& s : report.job_shares) {
    prometheus::Gauge& g = job_share_.Add({{"job_ns", s.namespace_name}, {"job_id", s.name}});
    g.Set(s.share);
    shares[JobKey(s.namespace_name, s.name)] = &g;
  }
  for (const auto& [key, g] : job_shares_) {
    if (shares.count(key) == 0) job_share_.Remove(g);
  }
  job_shares_ = std::move(shares);
  // Series of jobs no longer in the cluster.
  for (auto it = retries_.begin(); it != retries_.end();) {
    std::erase_if(it->second.keys, [&](const std::string& k) { return !cluster.FindJob(k); });
    if (it->second.keys.empty()) {
      job_retry_counts_.Remove(it->second.counter);
      it = retries_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = job_durations_.begin(); it != job_durations_.end();) {
    if (cluster.FindJob(it->first) == nullptr) {
      job_duration_.Remove(it->second.duration);
      job_start_time_.Remove(it->second.start_time);
      job_last_time_.Remove(it->second.last_time);
      it = job_durations_.erase(it);
    } else {
      ++it;
    }
  }

  // Queues.
  std::set<std::string> seen;
  for (const auto& q : report.queues) {
    seen.insert(q.name);
    SetQueueResource(allocated_, q.name, q.allocated);
    SetQueueResource(request_, q.name, q.request);
    // Unlimited dimensions have no number; Volcano reports the cluster's total then. Basalt
    // reports what the queue's spec says: an absent capability has no series.
    if (q.capability.has_value()) SetQueueResource(capacity_, q.name, *q.capability);
    if (q.share.deserved.has_value()) SetQueueResource(deserved_, q.name, *q.share.deserved);
    if (q.share.real_capability.has_value()) {
      SetQueueResource(real_capacity_, q.name, *q.share.real_capability);
    }
    if (q.share.share.has_value()) queue_share_.Add({{"queue_name", q.name}}).Set(*q.share.share);
    queue_weight_.Add({{"queue_name", q.name}}).Set(q.weight);
    queue_overused_.Add({{"queue_name", q.name}}).Set(q.overused ? 1 : 0);
  }
  for (const std::string& name : queues_) {
    if (seen.count(name) == 0) RemoveQueue(name);
  }
  queues_ = std::move(seen);
}

void VolcanoMetrics::ObserveBindLatency(bool ok, std::chrono::nanoseconds latency) {
  (ok ? bind_ok_latency_ : bind_error_latency_).Observe(Millis(latency));
}

void VolcanoMetrics::ObserveBindError() {
  std::lock_guard<std::mutex> l(mu_);
  attempts_error_.Increment();
}

}  // namespace basalt::sched::app
