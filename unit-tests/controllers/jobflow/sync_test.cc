#include "controllers/jobflow/sync.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/api/flow.h"
#include "common/api/time.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

api::Time At(std::string_view rfc3339) {
  absl::StatusOr<api::Time> t = api::ParseRfc3339(rfc3339);
  REQUIRE(t.ok());
  return *t;
}

// a -> b -> c, and c also depends on a.
api::JobFlow Flow(std::string_view status = "{}") {
  absl::StatusOr<api::JobFlow> f = api::JobFlow::Parse(fmt::format(
      R"({{"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow",
          "metadata":{{"name":"wf","namespace":"ns","uid":"u1"}},
          "spec":{{"jobRetainPolicy":"retain","flows":[{{"name":"a"}},
            {{"name":"b","dependsOn":{{"targets":["a"]}}}},
            {{"name":"c","dependsOn":{{"targets":["b","a"]}}}}]}},
          "status":{}}})",
      status));
  REQUIRE(f.ok());
  return *std::move(f);
}

FlowJob Job(std::string name, std::string phase) {
  FlowJob j;
  j.name = std::move(name);
  j.phase = std::move(phase);
  j.creation_timestamp = At("2026-01-01T00:00:00Z");
  return j;
}

TEST_CASE("JobFlow: decodes flows, dependsOn and the probe marker", "[controllers][jobflow]") {
  absl::StatusOr<api::JobFlow> f = api::JobFlow::Parse(
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":"x"},
          "spec":{"flows":[{"name":"a","dependsOn":{"targets":["b"],"probe":{"tcpSocketList":[]}}}]}})");
  REQUIRE(f.ok());
  REQUIRE(f->spec().flows.size() == 1);
  REQUIRE(f->spec().flows[0].depends_on.has_value());
  CHECK(f->spec().flows[0].depends_on->targets == std::vector<std::string>{"b"});
  CHECK(f->spec().flows[0].depends_on->has_probe);
  absl::StatusOr<api::JobFlow> bad = api::JobFlow::Parse(
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobFlow","metadata":{"name":"x"},
          "spec":{"flows":[{"name":3}]}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("spec.flows[0].name") != std::string::npos);
}

TEST_CASE("FlowsReadyToCreate: a flow waits until every target's Job is Completed",
          "[controllers][jobflow]") {
  api::JobFlow flow = Flow();
  std::map<std::string, FlowJob> jobs;
  CHECK(FlowsReadyToCreate(flow, jobs) == std::vector<std::string>{"a"});
  jobs["wf-a"] = Job("wf-a", "Running");
  CHECK(FlowsReadyToCreate(flow, jobs).empty());
  jobs["wf-a"].phase = "Completed";
  CHECK(FlowsReadyToCreate(flow, jobs) == std::vector<std::string>{"b"});
  jobs["wf-b"] = Job("wf-b", "Completed");
  CHECK(FlowsReadyToCreate(flow, jobs) == std::vector<std::string>{"c"});
  jobs["wf-a"].phase = "Failed";  // c needs a too
  CHECK(FlowsReadyToCreate(flow, jobs).empty());
}

TEST_CASE("ComputeJobFlowStatus: lists, conditions and phases as Volcano",
          "[controllers][jobflow]") {
  const api::Time now = At("2026-01-01T00:01:00Z");
  api::JobFlowStatus st = ComputeJobFlowStatus(Flow(), {Job("wf-a", "Pending")}, now);
  CHECK(st.pending_jobs == std::vector<std::string>{"wf-a"});
  CHECK(st.phase == "Pending");
  REQUIRE(st.job_status_list.size() == 1);
  CHECK(st.job_status_list[0].running_histories.size() == 1);
  CHECK(st.conditions.at("wf-a").phase == "Pending");

  api::JobFlow running = Flow();
  running.SetStatus(st);
  FlowJob a = Job("wf-a", "Completed");
  a.running_duration = "1m30s";
  st = ComputeJobFlowStatus(running, {a, Job("wf-b", "Running")}, now);
  CHECK(st.phase == "Running");
  CHECK(st.completed_jobs == std::vector<std::string>{"wf-a"});
  CHECK(st.running_jobs == std::vector<std::string>{"wf-b"});
  REQUIRE(st.job_status_list.size() == 2);
  CHECK(st.job_status_list[0].end_timestamp == At("2026-01-01T00:01:30Z"));
  REQUIRE(st.job_status_list[0].running_histories.size() == 2);
  CHECK(st.job_status_list[0].running_histories[0].end_timestamp == now);
  CHECK(st.job_status_list[0].running_histories[1].state == "Completed");

  running.SetStatus(st);
  st = ComputeJobFlowStatus(running, {a, Job("wf-b", "Completed"), Job("wf-c", "Completing")}, now);
  CHECK(st.phase == "Running");  // Completing is in no list
  CHECK(st.unknown_jobs.empty());
  running.SetStatus(st);
  st = ComputeJobFlowStatus(running, {a, Job("wf-b", "Completed"), Job("wf-c", "Completed")}, now);
  CHECK(st.phase == "Succeed");
  CHECK(st.completed_jobs.size() == 3);
}

TEST_CASE("NextJobFlowPhase: a failed Job fails a pending flow, terminal phases stay",
          "[controllers][jobflow]") {
  api::JobFlowStatus st;
  st.failed_jobs = {"wf-a"};
  CHECK(NextJobFlowPhase("", st, 3) == "Failed");
  CHECK(NextJobFlowPhase("Running", st, 3) == "Running");  // Volcano's running state
  CHECK(NextJobFlowPhase("Succeed", st, 3) == "Succeed");
}

TEST_CASE("JobFlow::SetStatus round-trips through the document", "[controllers][jobflow]") {
  api::JobFlow flow = Flow();
  FlowJob a = Job("wf-a", "Running");
  a.task_status_count["worker"]["Running"] = 2;
  api::JobFlowStatus st = ComputeJobFlowStatus(flow, {a}, At("2026-01-01T00:01:00Z"));
  flow.SetStatus(st);
  absl::StatusOr<api::JobFlow> again = api::JobFlow::Parse(flow.ToJson());
  REQUIRE(again.ok());
  CHECK(again->status() == st);
  CHECK(flow.ToJson().find(R"("unKnowJobs":[])") != std::string::npos);
  CHECK(flow.ToJson().find(R"("state":{"phase":"Running"})") != std::string::npos);
}

TEST_CASE("JobTemplate: jobDependsOnList and the Job spec", "[controllers][jobflow]") {
  absl::StatusOr<api::JobTemplate> t = api::JobTemplate::Parse(
      R"({"apiVersion":"flow.volcano.sh/v1alpha1","kind":"JobTemplate","metadata":{"name":"a"},
          "spec":{"minAvailable":1},"status":{"jobDependsOnList":["wf-a"]}})");
  REQUIRE(t.ok());
  CHECK(t->job_depends_on_list() == std::vector<std::string>{"wf-a"});
  REQUIRE(t->JobSpec() != nullptr);
  t->SetJobDependsOnList({"wf-a", "wf2-a"});
  CHECK(t->ToJson().find(R"("jobDependsOnList":["wf-a","wf2-a"])") != std::string::npos);
  CHECK(api::FlowJobName("wf", "a") == "wf-a");
  CHECK(api::TemplateString("ns", "a") == "ns.a");
}

}  // namespace
}  // namespace basalt::controllers
