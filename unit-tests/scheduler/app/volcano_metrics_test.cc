#include "scheduler/app/volcano_metrics.h"

#include <catch2/catch.hpp>
#include <string>

#include "prometheus/text_serializer.h"

namespace basalt::sched::app {
namespace {

std::string Scrape(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

ClusterInfo ClusterWith(std::initializer_list<std::pair<std::string, std::string>> jobs) {
  ClusterInfo c;
  for (const auto& [ns, name] : jobs) REQUIRE(c.AddJob(JobInfo(ns, name)).ok());
  return c;
}

CycleReport Report() {
  CycleReport r;
  r.total = std::chrono::milliseconds(12);
  r.actions = {{"enqueue", std::chrono::milliseconds(1)},
               {"allocate", std::chrono::milliseconds(9)}};
  r.plugins = {{"gang", true, std::chrono::microseconds(300)},
               {"gang", false, std::chrono::microseconds(200)}};
  r.tasks_dispatched = 2;
  r.task_latencies = {std::chrono::milliseconds(40), std::chrono::milliseconds(900)};
  r.unschedulable_jobs = {{"b", "ns", "default", 3}};
  r.scheduled_jobs = {{"a", "ns", "default", std::chrono::milliseconds(1500),
                       Timestamp(std::chrono::seconds(1700000000)),
                       Timestamp(std::chrono::milliseconds(1700000001500))}};
  r.job_shares = {{"a", "ns", 0.25}, {"b", "ns", 0}};
  r.evictions = 1;
  r.preemption_attempts = 2;
  CycleReport::Queue q;
  q.name = "default";
  q.weight = 2;
  q.allocated = Resource(2000, 1024);
  q.allocated.Set("nvidia.com/gpu", 2000);
  q.request = Resource(5000, 4096);
  q.request.Set("nvidia.com/gpu", 5000);
  q.share.deserved = Resource(4000, 2048);
  q.share.share = 0.5;
  q.overused = false;
  r.queues.push_back(q);
  return r;
}

TEST_CASE("VolcanoMetrics: a cycle's report becomes Volcano's series and labels",
          "[sched][metrics]") {
  prometheus::Registry registry;
  VolcanoMetrics m(registry);
  m.ObserveCycle(Report(), ClusterWith({{"ns", "a"}, {"ns", "b"}}));
  m.ObserveBindError();
  m.ObserveBindLatency(true, std::chrono::milliseconds(7));
  m.ObserveBindLatency(false, std::chrono::milliseconds(30));
  const std::string text = Scrape(registry);
  CHECK(Has(text,
            "volcano_task_operation_latency_milliseconds_count{operation=\"bind\","
            "result=\"success\"} 1"));
  CHECK(Has(text,
            "volcano_task_operation_latency_milliseconds_sum{operation=\"bind\","
            "result=\"error\"} 30"));
  CHECK(Has(text, "volcano_e2e_scheduling_latency_milliseconds_count 1"));
  CHECK(Has(text, "volcano_e2e_scheduling_latency_milliseconds_sum 12"));
  CHECK(Has(text, "volcano_action_scheduling_latency_milliseconds_count{action=\"allocate\"} 1"));
  CHECK(Has(text,
            "volcano_plugin_scheduling_latency_milliseconds_count{OnSession=\"OnSessionOpen\","
            "plugin=\"gang\"} 1"));
  CHECK(Has(text, "volcano_task_scheduling_latency_milliseconds_count 2"));
  CHECK(Has(text, "volcano_schedule_attempts_total{result=\"scheduled\"} 2"));
  CHECK(Has(text, "volcano_schedule_attempts_total{result=\"unschedulable\"} 3"));
  CHECK(Has(text, "volcano_schedule_attempts_total{result=\"error\"} 1"));
  CHECK(Has(text, "volcano_unschedule_job_count 1"));
  CHECK(Has(text, "volcano_unschedule_task_count{job_id=\"b\"} 3"));
  CHECK(Has(text, "volcano_job_retry_counts{job_id=\"b\"} 1"));
  CHECK(Has(text, "volcano_pod_preemption_victims 1"));
  CHECK(Has(text, "volcano_total_preemption_attempts 2"));
  CHECK(Has(text, "volcano_e2e_job_scheduling_latency_milliseconds_count 1"));
  CHECK(Has(text,
            "volcano_e2e_job_scheduling_duration{job_name=\"a\",job_namespace=\"ns\","
            "queue=\"default\"} 1500"));
  CHECK(Has(text,
            "volcano_e2e_job_scheduling_start_time{job_name=\"a\",job_namespace=\"ns\","
            "queue=\"default\"} 1700000000"));
  CHECK(Has(text,
            "volcano_e2e_job_scheduling_last_time{job_name=\"a\",job_namespace=\"ns\","
            "queue=\"default\"} 1700000001"));
  CHECK(Has(text, "volcano_job_share{job_id=\"a\",job_ns=\"ns\"} 0.25"));
  CHECK(Has(text, "volcano_job_share{job_id=\"b\",job_ns=\"ns\"} 0"));
  CHECK(Has(text, "volcano_queue_allocated_milli_cpu{queue_name=\"default\"} 2000"));
  CHECK(Has(text, "volcano_queue_allocated_memory_bytes{queue_name=\"default\"} 1024"));
  CHECK(Has(text,
            "volcano_queue_allocated_scalar_resources{queue_name=\"default\","
            "resource=\"nvidia.com/gpu\"} 2000"));
  CHECK(Has(text,
            "volcano_queue_request_scalar_resources{queue_name=\"default\","
            "resource=\"nvidia.com/gpu\"} 5000"));
  CHECK(Has(text, "volcano_queue_deserved_milli_cpu{queue_name=\"default\"} 4000"));
  CHECK(Has(text, "volcano_queue_share{queue_name=\"default\"} 0.5"));
  CHECK(Has(text, "volcano_queue_weight{queue_name=\"default\"} 2"));
  CHECK(Has(text, "volcano_queue_overused{queue_name=\"default\"} 0"));
  // No capability in the spec: no capacity series (rather than a made-up number).
  CHECK(text.find("volcano_queue_capacity_milli_cpu{") == std::string::npos);
}

TEST_CASE("VolcanoMetrics: series of jobs and queues that are gone are removed",
          "[sched][metrics]") {
  prometheus::Registry registry;
  VolcanoMetrics m(registry);
  m.ObserveCycle(Report(), ClusterWith({{"ns", "a"}, {"ns", "b"}}));
  // Still unschedulable next cycle: the retry counter grows.
  m.ObserveCycle(Report(), ClusterWith({{"ns", "a"}, {"ns", "b"}}));
  CHECK(Has(Scrape(registry), "volcano_job_retry_counts{job_id=\"b\"} 2"));

  // "b" placed (no longer unschedulable) but still there: its task gauge goes, its counter
  // stays; the queue's GPUs drop to zero rather than keeping the last value.
  CycleReport next = Report();
  next.unschedulable_jobs.clear();
  next.queues[0].allocated = Resource(2000, 1024);
  m.ObserveCycle(next, ClusterWith({{"ns", "a"}, {"ns", "b"}}));
  std::string text = Scrape(registry);
  CHECK(text.find("volcano_unschedule_task_count{job_id=\"b\"}") == std::string::npos);
  CHECK(Has(text, "volcano_unschedule_job_count 0"));
  CHECK(Has(text, "volcano_job_retry_counts{job_id=\"b\"} 2"));
  CHECK(Has(text,
            "volcano_queue_allocated_scalar_resources{queue_name=\"default\","
            "resource=\"nvidia.com/gpu\"} 0"));

  // Both jobs deleted and the queue gone.
  CycleReport empty;
  m.ObserveCycle(empty, ClusterInfo());
  text = Scrape(registry);
  CHECK(text.find("volcano_job_retry_counts{") == std::string::npos);
  CHECK(text.find("volcano_e2e_job_scheduling_duration{") == std::string::npos);
  CHECK(text.find("volcano_e2e_job_scheduling_start_time{") == std::string::npos);
  CHECK(text.find("volcano_e2e_job_scheduling_last_time{") == std::string::npos);
  // No job reported by drf this cycle: no share series.
  CHECK(text.find("volcano_job_share{") == std::string::npos);
  CHECK(text.find("queue_name=\"default\"") == std::string::npos);
}

TEST_CASE("VolcanoMetrics: jobs of one name in two namespaces share the job_id series",
          "[sched][metrics]") {
  prometheus::Registry registry;
  VolcanoMetrics m(registry);
  CycleReport r;
  r.unschedulable_jobs = {{"train", "team-a", "default", 2}, {"train", "team-b", "default", 3}};
  m.ObserveCycle(r, ClusterWith({{"team-a", "train"}, {"team-b", "train"}}));
  std::string text = Scrape(registry);
  CHECK(Has(text, "volcano_unschedule_task_count{job_id=\"train\"} 5"));
  CHECK(Has(text, "volcano_job_retry_counts{job_id=\"train\"} 2"));
  // One of them deleted: the series stays for the other.
  m.ObserveCycle(CycleReport(), ClusterWith({{"team-b", "train"}}));
  CHECK(Has(Scrape(registry), "volcano_job_retry_counts{job_id=\"train\"} 2"));
  m.ObserveCycle(CycleReport(), ClusterInfo());
  CHECK(Scrape(registry).find("volcano_job_retry_counts{") == std::string::npos);
}

}  // namespace
}  // namespace basalt::sched::app
