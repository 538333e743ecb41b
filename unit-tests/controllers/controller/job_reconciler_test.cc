// The job controller's reconcile against an in-memory API server: what it creates, deletes,
// patches and writes for given Job, PodGroup and pod states (informer caches filled by hand).

#include "controllers/job/controller/job_reconciler.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/informer/store.h"
#include "fmt/format.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "unit-tests/controllers/controller/fake_api.h"
#include "unit-tests/controllers/controller/job_fixtures.h"

namespace basalt::controllers {
namespace {

using testing::CacheObject;
using testing::FakeApiServer;
using testing::JobBuilder;
using testing::PodGroupJson;
using testing::PodJson;

constexpr char kNs[] = "ns";
constexpr char kJobPath[] = "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/train";
constexpr char kPodGroupPath[] =
    "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/train";
constexpr char kPodsPath[] = "/api/v1/namespaces/ns/pods";

struct Fixture {
  FakeApiServer api;
  informer::Store jobs;
  informer::Store pods{{{kPodsByJobIndex, PodsByJobIndexFunc()}}};
  informer::Store pod_groups;
  FakeClock clock;
  prometheus::Registry registry;
  JobMetrics metrics{registry};
  JobReconciler reconciler{&api.client(), JobListers{&jobs, &pods, &pod_groups, nullptr},
                           JobReconcilerOptions{.clock = &clock, .metrics = &metrics}};

  void AddJob(const JobBuilder& b) {
    api.Put(kJobPath, b.Json());
    CacheObject(jobs, b.Json());
  }
  void AddPod(int index, std::string_view phase, int version = 0) {
    const std::string json = PodJson(index, phase, version);
    api.Put(fmt::format("{}/train-worker-{}", kPodsPath, index), json);
    CacheObject(pods, json);
  }
  void AddPodGroup(const std::string& json) {
    api.Put(kPodGroupPath, json);
    CacheObject(pod_groups, json);
  }
  // The registry in Prometheus text; prometheus-cpp writes label names sorted.
  std::string Scrape() { return prometheus::TextSerializer().Serialize(registry.Collect()); }
  bool Scraped(std::string_view line) { return Scrape().find(line) != std::string::npos; }
  json::Document Job() const { return *json::Parse(api.Object(kJobPath)); }
  std::string JobStatus(std::initializer_list<std::string_view> path) const {
    json::Document d = Job();
    const json::Value* v = json::FindPath(d, path);
    if (v == nullptr) return "";
    return v->IsString() ? std::string(json::AsView(*v)) : json::Serialize(*v);
  }
};

TEST_CASE("JobReconciler: a new Job gets a PodGroup named after it, no pods, and phase Pending",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{});
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.Has(kPodGroupPath));
  json::Document pg = *json::Parse(f.api.Object(kPodGroupPath));
  CHECK(json::GetString(*json::FindPath(pg, {"metadata", "ownerReferences"})->Begin(), "uid") ==
        "job-uid-1");
  CHECK(f.api.RequestsMatching("POST", kPodsPath).empty());
  CHECK(f.JobStatus({"status", "state", "phase"}) == "Pending");
  CHECK(f.JobStatus({"status", "minAvailable"}) == "2");
}

TEST_CASE("JobReconciler: pods are created only once the PodGroup is Inqueue",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Pending"}})"});
  f.AddPodGroup(PodGroupJson("Pending"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).empty());

  f.AddPodGroup(PodGroupJson("Inqueue"));
  ReconcileResult r = f.reconciler.Reconcile("ns/train");
  REQUIRE(r.ok());
  CHECK(f.api.Has("/api/v1/namespaces/ns/pods/train-worker-0"));
  CHECK(f.api.Has("/api/v1/namespaces/ns/pods/train-worker-1"));
  json::Document pod = *json::Parse(f.api.Object("/api/v1/namespaces/ns/pods/train-worker-1"));
  CHECK(json::AsView(*json::FindPath(
            pod, {"metadata", "annotations", "scheduling.k8s.io/group-name"})) == "train");
  // The pending count alone changed, right after the first visit's status write: it is held
  // back for three seconds (issue 17: it would be one more write per job) and written then.
  CHECK(f.JobStatus({"status", "pending"}) == "");
  REQUIRE(r->has_value());
  CHECK(**r == std::chrono::seconds(3));
  f.clock.Advance(std::chrono::seconds(2));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.JobStatus({"status", "pending"}) == "");
  f.clock.Advance(std::chrono::seconds(1));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.JobStatus({"status", "pending"}) == "2");
}

TEST_CASE("JobReconciler: a phase change is written at once with the counters held back",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Pending"}})"});
  f.AddPodGroup(PodGroupJson("Inqueue"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());  // writes minAvailable; creates the pods
  f.AddPod(0, "Pending");
  f.AddPod(1, "Pending");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());  // counters only: held back
  const size_t writes = f.api.RequestsMatching("PUT", kJobPath).size();
  f.AddPod(0, "Running");
  f.AddPod(1, "Running");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());  // Running: at once, in one write
  CHECK(f.api.RequestsMatching("PUT", kJobPath).size() == writes + 1);
  CHECK(f.JobStatus({"status", "state", "phase"}) == "Running");
  CHECK(f.JobStatus({"status", "running"}) == "2");
  CHECK(f.JobStatus({"status", "pending"}) == "");
}

TEST_CASE("JobReconciler: a lagging pod cache does not cause duplicate creations",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Pending"}})"});
  f.AddPodGroup(PodGroupJson("Inqueue"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == 2);
  f.api.ClearCalls();
  // The cache has not seen the pods yet: the reconciler remembers its creations.
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).empty());
}

TEST_CASE("JobReconciler: after a restart, existing pods are kept and AlreadyExists is success",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.replicas = 3, .status = R"({"state":{"phase":"Pending"}})"});
  f.AddPodGroup(PodGroupJson("Inqueue"));
  f.AddPod(0, "Pending");
  // Pod 1 exists on the server but not yet in the cache (created just before a crash).
  f.api.Put("/api/v1/namespaces/ns/pods/train-worker-1", PodJson(1, "Pending"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  const auto posts = f.api.RequestsMatching("POST", kPodsPath);
  CHECK(posts.size() == 2);  // pods 1 (AlreadyExists) and 2
  CHECK(f.api.Has("/api/v1/namespaces/ns/pods/train-worker-2"));
  CHECK(f.JobStatus({"status", "pending"}) == "3");
}

TEST_CASE("JobReconciler: a same-named PodGroup of another Job UID is replaced",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{});
  f.AddPodGroup(PodGroupJson("Running", "old-job-uid", "old-pg-uid"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  const auto deletes = f.api.RequestsMatching("DELETE", kPodGroupPath);
  REQUIRE(deletes.size() == 1);
  CHECK(deletes[0].body.find("old-pg-uid") != std::string::npos);
  json::Document pg = *json::Parse(f.api.Object(kPodGroupPath));
  CHECK(json::AsView(*json::FindPath(pg, {"metadata", "uid"})) != "old-pg-uid");
  // No pods: the fresh PodGroup is not admitted yet, whatever the stale one said.
  CHECK(f.api.RequestsMatching("POST", kPodsPath).empty());
}

TEST_CASE(
    "JobReconciler: PodFailed with a RestartJob policy kills the job and bumps version and "
    "retryCount",
    "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.policies = R"([{"event":"PodFailed","action":"RestartJob"}])",
                      .status = R"({"state":{"phase":"Running"},"running":2,"minAvailable":2})"});
  f.AddPodGroup(PodGroupJson("Running"));
  f.AddPod(0, "Running");
  f.AddPod(1, "Failed");
  QueuedRequest q;
  q.request.job_uid = "job-uid-1";
  q.request.task = "worker";
  q.request.pod = "train-worker-1";
  q.request.event = Event::kPodFailed;
  q.request.exit_code = 3;
  q.request.job_version = 0;
  q.pod_uid = "pod-uid-1";
  f.reconciler.AddRequest("ns/train", q);
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());

  // Each pod is marked out-of-sync, then deleted with its UID as precondition.
  CHECK(f.api.RequestsMatching("PATCH", "/api/v1/namespaces/ns/pods/train-worker-").size() == 2);
  const auto deletes = f.api.RequestsMatching("DELETE", "/api/v1/namespaces/ns/pods/");
  REQUIRE(deletes.size() == 2);
  CHECK(deletes[0].body.find("pod-uid-") != std::string::npos);
  CHECK(f.reconciler.DeletedByController("pod-uid-0"));
  // The PodGroup goes with a whole-job kill; it comes back when the job is re-initiated.
  CHECK(f.api.RequestsMatching("DELETE", kPodGroupPath).size() == 1);
  CHECK_FALSE(f.api.Has(kPodGroupPath));
  CHECK(f.JobStatus({"status", "state", "phase"}) == "Restarting");
  CHECK(f.JobStatus({"status", "version"}) == "1");
  CHECK(f.JobStatus({"status", "retryCount"}) == "1");
  CHECK(f.JobStatus({"status", "terminating"}) == "2");
}

TEST_CASE("JobReconciler: an event from a pod of an earlier run does not restart again",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.policies = R"([{"event":"PodFailed","action":"RestartJob"}])",
                      .status = R"({"state":{"phase":"Running"},"version":1,"retryCount":1})"});
  f.AddPodGroup(PodGroupJson("Running"));
  f.AddPod(0, "Running", 1);
  QueuedRequest q;
  q.request.job_uid = "job-uid-1";
  q.request.task = "worker";
  q.request.pod = "train-worker-1";
  q.request.event = Event::kPodFailed;
  q.request.job_version = 0;
  f.reconciler.AddRequest("ns/train", q);
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("DELETE", "/api/v1/namespaces/ns/pods/").empty());
  CHECK(f.JobStatus({"status", "retryCount"}) == "1");
}

TEST_CASE("JobReconciler: a Command acts once and is deleted with its UID as precondition",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Running"},"running":2})"});
  f.AddPodGroup(PodGroupJson("Running"));
  f.AddPod(0, "Running");
  f.AddPod(1, "Running");
  const std::string cmd_path =
      "/apis/bus.volcano.sh/v1alpha1/namespaces/ns/commands/train-abortjob-x";
  f.api.Put(cmd_path,
            R"({"metadata":{"name":"train-abortjob-x","namespace":"ns","uid":"cmd-uid"}})");
  QueuedRequest q;
  q.request.action = "AbortJob";
  q.request.event = Event::kCommandIssued;
  q.command_namespace = kNs;
  q.command_name = "train-abortjob-x";
  q.command_uid = "cmd-uid";
  f.reconciler.AddRequest("ns/train", q);
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.JobStatus({"status", "state", "phase"}) == "Aborting");
  const auto deletes = f.api.RequestsMatching("DELETE", cmd_path);
  REQUIRE(deletes.size() == 1);
  CHECK(deletes[0].body.find("cmd-uid") != std::string::npos);
  CHECK_FALSE(f.api.Has(cmd_path));

  // Delivered again (e.g. a relist before the deletion was seen): ignored.
  f.api.ClearCalls();
  f.reconciler.AddRequest("ns/train", q);
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("DELETE", cmd_path).empty());
}

TEST_CASE("JobReconciler: all pods succeeded completes the job and keeps the counts",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Running"},"running":2})"});
  f.AddPodGroup(PodGroupJson("Running"));
  f.AddPod(0, "Succeeded");
  f.AddPod(1, "Succeeded");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.JobStatus({"status", "state", "phase"}) == "Completed");
  CHECK(f.JobStatus({"status", "succeeded"}) == "2");
  // A later visit kills nothing (Succeeded pods are kept) and does not rewrite the status.
  f.api.ClearCalls();
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("PUT", kJobPath).empty());
  CHECK(f.api.RequestsMatching("DELETE", "/api/v1/").empty());
}

TEST_CASE("JobReconciler: a policy timeout delays the action until it is due",
          "[controllers][job-controller]") {
  FakeClock clock;
  FakeApiServer api;
  informer::Store jobs, pods{{{kPodsByJobIndex, PodsByJobIndexFunc()}}}, pod_groups;
  JobReconciler reconciler(&api.client(), JobListers{&jobs, &pods, &pod_groups, nullptr},
                           JobReconcilerOptions{.clock = &clock, .recorder = nullptr});
  const JobBuilder job{
      .policies = R"([{"event":"PodFailed","action":"RestartJob","timeout":"10s"}])",
      .status = R"({"state":{"phase":"Running"},"running":2})"};
  api.Put(kJobPath, job.Json());
  CacheObject(jobs, job.Json());
  api.Put(kPodGroupPath, PodGroupJson("Running"));
  CacheObject(pod_groups, PodGroupJson("Running"));
  for (int i : {0, 1}) {
    api.Put(fmt::format("{}/train-worker-{}", kPodsPath, i),
            PodJson(i, i == 1 ? "Failed" : "Running"));
    CacheObject(pods, PodJson(i, i == 1 ? "Failed" : "Running"));
  }
  QueuedRequest q;
  q.request.job_uid = "job-uid-1";
  q.request.task = "worker";
  q.request.pod = "train-worker-1";
  q.request.event = Event::kPodFailed;
  q.request.job_version = 0;
  q.pod_uid = "pod-uid-1";
  reconciler.AddRequest("ns/train", q);
  ReconcileResult first = reconciler.Reconcile("ns/train");
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  CHECK(**first <= std::chrono::seconds(10));
  CHECK(**first > std::chrono::seconds(9));
  CHECK(api.RequestsMatching("DELETE", "/api/v1/namespaces/ns/pods/").empty());

  clock.Advance(std::chrono::seconds(11));
  ReconcileResult second = reconciler.Reconcile("ns/train");
  REQUIRE(second.ok());
  CHECK_FALSE(second->has_value());
  CHECK(api.RequestsMatching("DELETE", "/api/v1/namespaces/ns/pods/").size() == 2);
  json::Document written = *json::Parse(api.Object(kJobPath));
  CHECK(json::AsView(*json::FindPath(written, {"status", "state", "phase"})) == "Restarting");
}

TEST_CASE("JobReconciler: a deleted Job forgets its requests", "[controllers][job-controller]") {
  Fixture f;
  QueuedRequest q;
  q.request.event = Event::kPodFailed;
  f.reconciler.AddRequest("ns/gone", q);
  REQUIRE(f.reconciler.Reconcile("ns/gone").ok());
  CHECK(f.reconciler.PendingRequests("ns/gone") == 0);
  CHECK(f.api.Calls().empty());
}

TEST_CASE("JobReconciler: plugin objects are created once with the Job as owner",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.policies = R"([],"plugins":{"svc":[]})"});
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.Has("/api/v1/namespaces/ns/services/train"));
  CHECK(f.api.Has("/api/v1/namespaces/ns/configmaps/train-svc"));
  CHECK(f.JobStatus({"status", "controlledResources", "plugin-svc"}) == "svc");
}

}  // namespace
}  // namespace basalt::controllers

namespace basalt::controllers {
namespace {

TEST_CASE("JobReconciler: a re-created Job of the same name gets its own pods at once",
          "[controllers][job-controller]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Pending"}})"});
  f.AddPodGroup(PodGroupJson("Inqueue"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  REQUIRE(f.api.RequestsMatching("POST", kPodsPath).size() == 2);

  // The Job is deleted and created again before the cache saw any of the first Job's pods.
  f.api.ClearCalls();
  JobBuilder again{.uid = "job-uid-2", .status = R"({"state":{"phase":"Pending"}})", .rv = "20"};
  f.api.Put(kJobPath, again.Json());
  CacheObject(f.jobs, again.Json());
  f.AddPodGroup(PodGroupJson("Inqueue", "job-uid-2", "pg-uid-2"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == 2);
}

}  // namespace
}  // namespace basalt::controllers

namespace basalt::controllers {
namespace {

TEST_CASE("JobMetrics: pod creation latency and the e2e creation gauge follow the Job's age",
          "[controllers][job-controller][metrics]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Pending"}})"});
  f.AddPodGroup(PodGroupJson("Inqueue"));
  // The Job was created at the fake wall clock's start; its pods 1.5 s later.
  f.clock.Advance(std::chrono::milliseconds(1500));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  REQUIRE(f.api.Has("/api/v1/namespaces/ns/pods/train-worker-1"));
  CHECK(f.Scraped("volcano_controller_job_to_pod_creation_latency_milliseconds_count 2\n"));
  CHECK(f.Scraped("volcano_controller_job_to_pod_creation_latency_milliseconds_sum 3000\n"));
  // 1500 ms falls in the 2560 bucket (5 * 2^9), not in 1280.
  CHECK(f.Scraped(
      R"(volcano_controller_job_to_pod_creation_latency_milliseconds_bucket{le="1280"} 0)"));
  CHECK(f.Scraped(
      R"(volcano_controller_job_to_pod_creation_latency_milliseconds_bucket{le="2560"} 2)"));
  CHECK(f.Scraped(
      R"(volcano_controller_job_e2e_creation_duration_milliseconds{job_name="train",job_namespace="ns",queue="default"} 1500)"));
}

TEST_CASE("JobMetrics: a Job reaching Completed is counted once by job and queue",
          "[controllers][job-controller][metrics]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Running"},"running":2})"});
  f.AddPodGroup(PodGroupJson("Running"));
  f.AddPod(0, "Succeeded");
  f.AddPod(1, "Succeeded");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  REQUIRE(f.JobStatus({"status", "state", "phase"}) == "Completed");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());  // no second phase change, no second count
  CHECK(f.Scraped(
      R"(volcano_job_completed_phase_count{job_name="ns/train",queue_name="default"} 1)"));
  CHECK(!f.Scraped(R"(volcano_job_failed_phase_count{)"));
}

TEST_CASE("JobMetrics: a failed Job is counted and its series go with the Job",
          "[controllers][job-controller][metrics]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Running"},"running":2})"});
  f.AddPodGroup(PodGroupJson("Running"));
  f.AddPod(0, "Failed");
  f.AddPod(1, "Failed");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  REQUIRE(f.JobStatus({"status", "state", "phase"}) == "Failed");
  CHECK(f.Scraped(R"(volcano_job_failed_phase_count{job_name="ns/train",queue_name="default"} 1)"));
  f.jobs.Delete("ns/train");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(!f.Scraped(R"(job_name="ns/train")"));
}

}  // namespace
}  // namespace basalt::controllers
