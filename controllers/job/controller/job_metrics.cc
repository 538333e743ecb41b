#include "controllers/job/controller/job_metrics.h"

#include <fmt/format.h>

#include <vector>

namespace basalt::controllers {
namespace {

// Volcano's buckets for the controller's latency: 5 ms doubling, 15 buckets.
prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries b;
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) b.push_back(v);
  return b;
}

double Milliseconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

JobMetrics::JobMetrics(prometheus::Registry& registry)
    : completed_(prometheus::BuildCounter()
                     .Name("volcano_job_completed_phase_count")
                     .Help("Number of job completed phase")
                     .Register(registry)),
      failed_(prometheus::BuildCounter()
                  .Name("volcano_job_failed_phase_count")
                  .Help("Number of job failed phase")
                  .Register(registry)),
      pod_creation_family_(prometheus::BuildHistogram()
                               .Name("volcano_controller_job_to_pod_creation_latency_milliseconds")
                               .Help("Latency from VCJob creation to pod created in milliseconds")
                               .Register(registry)),
      pod_creation_(pod_creation_family_.Add({}, ExponentialBuckets(5, 2, 15))),
      e2e_creation_(prometheus::BuildGauge()
                        .Name("volcano_controller_job_e2e_creation_duration_milliseconds")
                        .Help("End-to-end duration from VCJob creation to all pods created, in "
                              "milliseconds")
                        .Register(registry)) {}

void JobMetrics::PhaseReached(std::string_view ns, std::string_view name, std::string_view queue,
                              api::JobPhase phase) {
  const bool completed = phase == api::JobPhase::kCompleted;
  if (!completed && phase != api::JobPhase::kFailed) return;
  const std::string key = fmt::format("{}/{}", ns, name);
  std::lock_guard<std::mutex> l(mu_);
  JobSeries& s = jobs_[key];
  auto& by_queue = completed ? s.completed : s.failed;
  prometheus::Counter*& c = by_queue[std::string(queue)];
  if (c == nullptr) {
    c = &(completed ? completed_ : failed_)
             .Add({{"job_name", key}, {"queue_name", std::string(queue)}});
  }
  c->Increment();
}

void JobMetrics::PodCreated(std::chrono::nanoseconds since_job_creation) {
  pod_creation_.Observe(Milliseconds(since_job_creation));
}

void JobMetrics::AllPodsCreated(std::string_view ns, std::string_view name, std::string_view queue,
                                std::chrono::nanoseconds since_job_creation) {
  std::lock_guard<std::mutex> l(mu_);
  prometheus::Gauge*& g = jobs_[fmt::format("{}/{}", ns, name)].e2e[std::string(queue)];
  if (g == nullptr) {
    g = &e2e_creation_.Add({{"job_name", std::string(name)},
                            {"queue", std::string(queue)},
                            {"job_namespace", std::string(ns)}});
  }
  g->Set(Milliseconds(since_job_creation));
}

void JobMetrics::Remove(std::string_view ns, std::string_view name) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = jobs_.find(fmt::format("{}/{}", ns, name));
  if (it == jobs_.end()) return;
  for (auto& [queue, c] : it->second.completed) completed_.Remove(c);
  for (auto& [queue, c] : it->second.failed) failed_.Remove(c);
  for (auto& [queue, g] : it->second.e2e) e2e_creation_.Remove(g);
  jobs_.erase(it);
}

}  // namespace basalt::controllers
