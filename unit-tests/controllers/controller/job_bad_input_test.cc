// The job controller's reconcile with bad input (Jobs the webhook would have rejected, a
// missing Queue, templates the API server rejects, a PodGroup deleted by hand) and with job
// volumes (PVCs created from spec.volumes), against an in-memory API server.

#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <string>

#include "common/ctrlkit/event_recorder.h"
#include "common/informer/store.h"
#include "controllers/job/controller/job_reconciler.h"
#include "controllers/job/pods/pods.h"
#include "fmt/format.h"
#include "unit-tests/controllers/controller/fake_api.h"

namespace basalt::controllers {
namespace {

using testing::CacheObject;
using testing::FakeApiServer;

constexpr char kJobPath[] = "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/train";
constexpr char kPodGroupPath[] =
    "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/train";
constexpr char kPodsPath[] = "/api/v1/namespaces/ns/pods";
constexpr char kPvcsPath[] = "/api/v1/namespaces/ns/persistentvolumeclaims";
constexpr char kEventsPath[] = "/api/v1/namespaces/ns/events";

constexpr char kTemplate[] =
    R"({"spec":{"containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})";

std::string Task(std::string_view name, int replicas, std::string_view extra = "",
                 std::string_view tmpl = kTemplate) {
  return fmt::format(R"({{"name":"{}","replicas":{}{},"template":{}}})", name, replicas, extra,
                     tmpl);
}

// A Job with `spec` members after "queue" (tasks, minAvailable, volumes ...) and `status`.
std::string JobJson(std::string_view spec, std::string_view status = "{}",
                    std::string_view queue = "default") {
  return fmt::format(
      R"({{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{{"name":"train","namespace":"ns","uid":"job-uid-1","resourceVersion":"10","generation":1,"creationTimestamp":"2026-01-01T00:00:00Z"}},)"
      R"("spec":{{"schedulerName":"volcano","queue":"{}","maxRetry":3,{}}},"status":{}}})",
      queue, spec, status);
}

std::string PodGroupJson(std::string_view phase) {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{{"name":"train","namespace":"ns","uid":"pg-uid-1","resourceVersion":"5",)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train","uid":"job-uid-1","controller":true}}]}},)"
      R"("spec":{{"minMember":1,"queue":"default"}},"status":{{"phase":"{}"}}}})",
      phase);
}

std::string PodJson(int index, std::string_view phase) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"train-worker-{0}","namespace":"ns","uid":"pod-uid-{0}","resourceVersion":"7",)"
      R"("annotations":{{"volcano.sh/job-name":"train","volcano.sh/task-spec":"worker","volcano.sh/job-version":"0"}},)"
      R"("ownerReferences":[{{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","name":"train","uid":"job-uid-1","controller":true}}]}},)"
      R"("spec":{{"schedulerName":"volcano"}},"status":{{"phase":"{1}"}}}})",
      index, phase);
}

ctrlkit::EventRecorderOptions RecorderOptions() {
  ctrlkit::EventRecorderOptions o;
  o.component = "vc-controller-manager";
  return o;
}

struct Fixture {
  explicit Fixture(bool with_queues = false, int pod_concurrency = 16,
                   int64_t max_job_pods = kDefaultMaxJobPods)
      : reconciler(&api.client(),
                   JobListers{&jobs, &pods, &pod_groups, nullptr, with_queues ? &queues : nullptr},
                   JobReconcilerOptions{.clock = nullptr,
                                        .recorder = &recorder,
                                        .pod_concurrency = pod_concurrency,
                                        .max_job_pods = max_job_pods}) {}

  FakeApiServer api;
  informer::Store jobs;
  informer::Store pods{{{kPodsByJobIndex, PodsByJobIndexFunc()}}};
  informer::Store pod_groups;
  informer::Store queues;
  ctrlkit::EventRecorder recorder{&api.client(), RecorderOptions()};
  JobReconciler reconciler;

  void AddJob(const std::string& json) {
    api.Put(kJobPath, json);
    CacheObject(jobs, json);
  }
  void AddPodGroup(const std::string& json) {
    api.Put(kPodGroupPath, json);
    CacheObject(pod_groups, json);
  }
  void AddPod(int index, std::string_view phase) {
    const std::string json = PodJson(index, phase);
    api.Put(fmt::format("{}/train-worker-{}", kPodsPath, index), json);
    CacheObject(pods, json);
  }
  void AddQueue(std::string_view name) {
    CacheObject(
        queues,
        fmt::format(
            R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{{"name":"{}","resourceVersion":"1"}}}})",
            name));
  }
  std::string Field(std::initializer_list<std::string_view> path) const {
    json::Document d = *json::Parse(api.Object(kJobPath));
    const json::Value* v = json::FindPath(d, path);
    if (v == nullptr) return "";
    return v->IsString() ? std::string(json::AsView(*v)) : json::Serialize(*v);
  }
  // The reasons and messages of the Events sent so far ("Warning Reason: message").
  std::vector<std::string> Events() {
    recorder.Shutdown();
    std::vector<std::string> out;
    for (const auto& r : api.RequestsMatching("POST", kEventsPath)) {
      json::Document e = *json::Parse(r.body);
      out.push_back(fmt::format("{} {}: {}", json::GetString(e, "type"),
                                json::GetString(e, "reason"), json::GetString(e, "message")));
    }
    return out;
  }
};

bool AnyContains(const std::vector<std::string>& v, std::string_view needle) {
  for (const auto& s : v) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("JobReconciler: a Job without tasks stays Pending with InvalidJobSpec and no PodGroup",
          "[controllers][job-controller][bad-input]") {
  Fixture f;
  f.AddJob(JobJson(R"("minAvailable":0,"tasks":[])"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());  // not retried: the spec must change first
  CHECK_FALSE(f.api.Has(kPodGroupPath));
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  CHECK(f.Field({"status", "state", "reason"}) == "InvalidJobSpec");
  CHECK(f.Field({"status", "state", "message"}) == "spec.tasks: no task specified in the job spec");
  CHECK(AnyContains(f.Events(), "Warning InvalidJobSpec: spec.tasks: no task specified"));
}

TEST_CASE(
    "JobReconciler: duplicate task names, minAvailable above replicas, negative replicas and a "
    "template without containers are reported together, nothing is created",
    "[controllers][job-controller][bad-input]") {
  Fixture f;
  f.AddJob(JobJson(fmt::format(R"("minAvailable":9,"tasks":[{},{},{},{}])", Task("worker", 2),
                               Task("worker", 1, R"(,"minAvailable":3)"), Task("ps", -1),
                               Task("eval", 1, "", "{}"))));
  f.AddPodGroup(PodGroupJson("Inqueue"));  // even an admitted PodGroup gets no pods
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).empty());
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  const std::string message = f.Field({"status", "state", "message"});
  CHECK_THAT(message, Catch::Contains(R"(spec.tasks[1].name: duplicated task name "worker")"));
  CHECK_THAT(message, Catch::Contains("spec.tasks[1].minAvailable: 3 is greater than replicas 1"));
  CHECK_THAT(message, Catch::Contains("spec.tasks[2].replicas: must not be negative, got -1"));
  CHECK_THAT(message,
             Catch::Contains("spec.tasks[3].template.spec.containers: at least one container"));
  CHECK_THAT(message, Catch::Contains("spec.minAvailable: 9 is greater than the total replicas 4"));

  // Visits without a spec change write nothing and record nothing new. The recorder posts
  // asynchronously: the first visit's Warning is flushed before the calls are cleared (else it
  // may land after ClearCalls and look like a new one), the second visit's after the visit.
  f.recorder.Flush();
  f.api.ClearCalls();
  CacheObject(f.jobs, f.api.Object(kJobPath));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  f.recorder.Flush();
  CHECK(f.api.RequestsMatching("PUT", kJobPath).empty());
  CHECK(f.api.RequestsMatching("POST", kEventsPath).empty());
}

TEST_CASE("JobReconciler: a spec that does not parse is InvalidJobSpec, not a crash or a retry",
          "[controllers][job-controller][bad-input]") {
  Fixture f;
  // The CRD schema checks types, but not that a policy timeout is a Go duration.
  f.AddJob(JobJson(fmt::format(
      R"("tasks":[{}],"policies":[{{"event":"PodFailed","action":"RestartJob","timeout":"soon"}}])",
      Task("worker", 1))));
  ReconcileResult r = f.reconciler.Reconcile("ns/train");
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  CHECK(f.Field({"status", "state", "reason"}) == "InvalidJobSpec");
  CHECK_THAT(f.Field({"status", "state", "message"}), Catch::StartsWith("spec: "));
  CHECK_THAT(f.Field({"status", "state", "message"}), Catch::Contains("soon"));
  CHECK_FALSE(f.api.Has(kPodGroupPath));
}

TEST_CASE("JobReconciler: a bad resource quantity in a template names the field",
          "[controllers][job-controller][bad-input]") {
  Fixture f;
  f.AddJob(JobJson(fmt::format(
      R"("minAvailable":1,"tasks":[{}])",
      Task(
          "worker", 1, "",
          R"({"spec":{"containers":[{"name":"main","image":"busybox","resources":{"requests":{"cpu":"1x"}}}]}})"))));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.Field({"status", "state", "reason"}) == "InvalidJobSpec");
  CHECK_THAT(f.Field({"status", "state", "message"}),
             Catch::Contains("spec.tasks[0].template.spec.containers[0].resources.requests:"));
  CHECK_FALSE(f.api.Has(kPodGroupPath));
}

TEST_CASE("JobReconciler: a Job naming a missing Queue waits Pending and retries until it exists",
          "[controllers][job-controller][bad-input]") {
  Fixture f(/*with_queues=*/true);
  f.AddQueue("default");
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 1)), "{}",
                   "research"));
  ReconcileResult r = f.reconciler.Reconcile("ns/train");
  REQUIRE_FALSE(r.ok());  // retried with backoff by the work queue
  CHECK_FALSE(f.api.Has(kPodGroupPath));
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  CHECK(f.Field({"status", "state", "reason"}) == "QueueNotFound");
  CHECK_THAT(f.Field({"status", "state", "message"}),
             Catch::Contains(R"(queue "research" does not exist)"));

  f.AddQueue("research");
  CacheObject(f.jobs, f.api.Object(kJobPath));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.Has(kPodGroupPath));
  CHECK(f.Field({"status", "state", "reason"}).empty());
  CHECK(f.Field({"status", "state", "message"}).empty());
  CHECK(AnyContains(f.Events(), R"(Warning QueueNotFound: queue "research" does not exist)"));
}

TEST_CASE(
    "JobReconciler: a template the API server rejects is a FailedCreate naming the pod, and the "
    "task's other pods are not POSTed",
    "[controllers][job-controller][bad-input]") {
  Fixture f(/*with_queues=*/false, /*pod_concurrency=*/1);
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 5)),
                   R"({"state":{"phase":"Pending"}})"));
  f.AddPodGroup(PodGroupJson("Inqueue"));
  f.api.FailRequests("POST", kPodsPath, 422, "Invalid",
                     "Pod train-worker-0 is invalid: spec.containers[0].name: Invalid value");
  ReconcileResult r = f.reconciler.Reconcile("ns/train");
  REQUIRE_FALSE(r.ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == 1);
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  CHECK(f.Field({"status", "state", "reason"}) == "FailedCreate");
  CHECK_THAT(f.Field({"status", "state", "message"}),
             Catch::StartsWith("Error creating pod train-worker-0 of task worker: "));
  CHECK_THAT(f.Field({"status", "state", "message"}),
             Catch::Contains("Pod train-worker-0 is invalid: spec.containers[0].name"));

  // Fixed (e.g. the template was edited): the pods are created and the reason goes away.
  f.api.ClearFailures();
  CacheObject(f.jobs, f.api.Object(kJobPath));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == 6);
  CHECK(f.Field({"status", "state", "reason"}).empty());
}

// Peak resident memory of this process so far, in MB.
long PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

TEST_CASE(
    "JobReconciler: a Job of a billion replicas above --max-job-pods is InvalidJobSpec with a "
    "message, and gets neither PodGroup nor pods",
    "[controllers][job-controller][bad-input]") {
  Fixture f;  // the default limit
  const long rss_before = PeakRssMb();
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 1000000000))));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());  // not retried: the spec must change first
  CHECK(PeakRssMb() - rss_before < 64);
  CHECK_FALSE(f.api.Has(kPodGroupPath));
  CHECK(f.api.RequestsMatching("POST", kPodsPath).empty());
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  CHECK(f.Field({"status", "state", "reason"}) == "InvalidJobSpec");
  const std::string message = f.Field({"status", "state", "message"});
  CHECK_THAT(message, Catch::Contains("spec.tasks: 1000000000 pods in total is more than the job "
                                      "controller creates for one job (--max-job-pods=100000)"));
  CHECK(AnyContains(f.Events(), "Warning InvalidJobSpec: spec.tasks: 1000000000 pods in total"));
}

TEST_CASE(
    "JobReconciler: under a limit raised to two billion, a billion-replica job creates one "
    "bounded batch of pods per visit and comes back for the next",
    "[controllers][job-controller][bad-input]") {
  Fixture f(/*with_queues=*/false, /*pod_concurrency=*/16, /*max_job_pods=*/2'000'000'000);
  const long rss_before = PeakRssMb();
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 1000000000)),
                   R"({"state":{"phase":"Pending"}})"));
  f.AddPodGroup(PodGroupJson("Inqueue"));
  ReconcileResult first = f.reconciler.Reconcile("ns/train");
  REQUIRE(first.ok());
  REQUIRE(first->has_value());  // requeued at once for the rest
  CHECK(**first <= std::chrono::milliseconds(1));
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == kMaxPodCreatesPerSync);

  CacheObject(f.jobs, f.api.Object(kJobPath));
  ReconcileResult second = f.reconciler.Reconcile("ns/train");
  REQUIRE(second.ok());
  // The pods of the first visit (expected, not yet in the cache) are not created again.
  const auto posts = f.api.RequestsMatching("POST", kPodsPath);
  REQUIRE(posts.size() == 2 * kMaxPodCreatesPerSync);
  std::set<std::string> names;
  for (const auto& r : posts) {
    json::Document pod = *json::Parse(r.body);
    names.insert(std::string(json::GetString(*json::Find(pod, "metadata"), "name")));
  }
  CHECK(names.size() == 2 * kMaxPodCreatesPerSync);
  CHECK(names.count("train-worker-0") == 1);
  CHECK(names.count("train-worker-1999") == 1);
  CHECK(names.count("train-worker-2000") == 0);
  // Memory follows the pods created (2,000), not the replicas (a billion names would be GBs).
  // Not under AddressSanitizer (redzones and quarantine add their own 100 MB or so) nor
  // ThreadSanitizer (its shadow memory is several times what the test allocates).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)rss_before;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  (void)rss_before;
#else
  CHECK(PeakRssMb() - rss_before < 64);
#endif
#else
  CHECK(PeakRssMb() - rss_before < 64);
#endif
}

TEST_CASE(
    "JobReconciler: pods are created in slow-start batches, and a failing batch stops the "
    "visit's creations",
    "[controllers][job-controller][bad-input]") {
  Fixture f(/*with_queues=*/false, /*pod_concurrency=*/16);
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 50)),
                   R"({"state":{"phase":"Pending"}})"));
  f.AddPodGroup(PodGroupJson("Inqueue"));
  f.api.FailRequests("POST", kPodsPath, 403, "Forbidden",
                     "pods \"train-worker-0\" is forbidden: exceeded quota: pods");
  ReconcileResult r = f.reconciler.Reconcile("ns/train");
  REQUIRE_FALSE(r.ok());                                         // retried with backoff
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == 1);  // the batch of one
  CHECK(f.Field({"status", "state", "reason"}) == "FailedCreate");
  CHECK_THAT(f.Field({"status", "state", "message"}), Catch::Contains("exceeded quota"));

  f.api.ClearFailures();
  CacheObject(f.jobs, f.api.Object(kJobPath));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPodsPath).size() == 51);  // 1 + 1, 2, 4, 8, 16, 19
  CHECK(f.Field({"status", "state", "reason"}).empty());
}

TEST_CASE("JobReconciler: a PodGroup deleted by hand while the job runs is created again",
          "[controllers][job-controller][bad-input]") {
  Fixture f;
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 1)),
                   R"({"state":{"phase":"Running"},"running":1,"minAvailable":1})"));
  f.AddPod(0, "Running");
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.Has(kPodGroupPath));
  CHECK(f.Field({"status", "state", "phase"}) == "Running");  // the pods keep running
  CHECK(f.api.RequestsMatching("DELETE", kPodsPath).empty());
  CHECK(AnyContains(f.Events(),
                    "Warning PodGroupRecreated: PodGroup ns/train of the job was deleted while "
                    "the job was Running"));
}

TEST_CASE("JobReconciler: RetriesExhausted records an ExecuteAction Warning on the Job",
          "[controllers][job-controller][bad-input]") {
  Fixture f;
  f.AddJob(JobJson(fmt::format(R"("minAvailable":1,"tasks":[{}])", Task("worker", 1)),
                   R"({"state":{"phase":"Pending"}})"));
  f.reconciler.RetriesExhausted("ns/train", 15, absl::UnavailableError("etcd is down"));
  f.reconciler.RetriesExhausted("ns/gone", 15, absl::UnavailableError("no job: no event"));
  const std::vector<std::string> events = f.Events();
  REQUIRE(events.size() == 1);
  CHECK_THAT(events[0], Catch::StartsWith("Warning ExecuteAction: Job failed on action SyncJob "
                                          "for retry limit reached (15 retries): etcd is down"));
}

TEST_CASE(
    "JobReconciler: a volume with volumeClaim gets a PVC owned by the Job, its generated name "
    "is written back and every pod mounts it",
    "[controllers][job-controller][volumes]") {
  Fixture f;
  f.AddJob(JobJson(
      fmt::format(
          R"("minAvailable":2,"volumes":[{{"mountPath":"/data","volumeClaim":{{"accessModes":["ReadWriteOnce"],"resources":{{"requests":{{"storage":"1Gi"}}}}}}}}],"tasks":[{}])",
          Task("worker", 2)),
      R"({"state":{"phase":"Pending"}})"));
  f.AddPodGroup(PodGroupJson("Inqueue"));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());

  const std::string pvc_name = GeneratedPvcName("train", "job-uid-1", 0);
  CHECK_THAT(pvc_name, Catch::Matches("train-pvc-[0-9a-z]{12}"));
  const auto patches = f.api.RequestsMatching("PATCH", kJobPath);
  REQUIRE(patches.size() == 1);
  CHECK_THAT(patches[0].body,
             Catch::Contains(R"("op":"test","path":"/metadata/uid","value":"job-uid-1")"));
  CHECK_THAT(patches[0].body,
             Catch::Contains(fmt::format(R"("path":"/spec/volumes/0/volumeClaimName","value":"{}")",
                                         pvc_name)));

  const std::string pvc_path = fmt::format("{}/{}", kPvcsPath, pvc_name);
  REQUIRE(f.api.Has(pvc_path));
  json::Document pvc = *json::Parse(f.api.Object(pvc_path));
  const json::Value& owner = *json::FindPath(pvc, {"metadata", "ownerReferences"})->Begin();
  CHECK(json::GetString(owner, "uid") == "job-uid-1");
  CHECK(json::GetBool(owner, "controller"));
  CHECK(json::AsView(*json::FindPath(pvc, {"spec", "resources", "requests", "storage"})) == "1Gi");
  CHECK(f.Field({"status", "controlledResources", "volume-pvc-" + pvc_name}) == pvc_name);

  for (int i : {0, 1}) {
    json::Document pod =
        *json::Parse(f.api.Object(fmt::format("{}/train-worker-{}", kPodsPath, i)));
    const json::Value& vol = *json::FindPath(pod, {"spec", "volumes"})->Begin();
    CHECK(json::AsView(*json::FindPath(vol, {"persistentVolumeClaim", "claimName"})) == pvc_name);
    const json::Value& container = *json::FindPath(pod, {"spec", "containers"})->Begin();
    const json::Value& mount = *json::Find(container, "volumeMounts")->Begin();
    CHECK(json::GetString(mount, "mountPath") == "/data");
    CHECK(json::GetString(mount, "name") == json::GetString(vol, "name"));
  }

  // Checked once: the next visit neither reads nor creates the claim again.
  f.api.ClearCalls();
  CacheObject(f.jobs, f.api.Object(kJobPath));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("GET", kPvcsPath).empty());
  CHECK(f.api.RequestsMatching("POST", kPvcsPath).empty());
}

TEST_CASE(
    "JobReconciler: a volume naming a claim that does not exist waits with PVCError, an "
    "existing one is used as is",
    "[controllers][job-controller][volumes]") {
  Fixture f;
  f.AddJob(JobJson(fmt::format(
      R"("minAvailable":1,"volumes":[{{"mountPath":"/data","volumeClaimName":"shared"}}],"tasks":[{}])",
      Task("worker", 1))));
  REQUIRE_FALSE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.Field({"status", "state", "phase"}) == "Pending");
  CHECK(f.Field({"status", "state", "reason"}) == "PVCError");
  CHECK(f.Field({"status", "state", "message"}) ==
        "pvc shared is not found, the job will be in the Pending state until the PVC is created");
  CHECK_FALSE(f.api.Has(kPodGroupPath));

  f.api.Put(
      fmt::format("{}/shared", kPvcsPath),
      R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"shared","namespace":"ns"}})");
  CacheObject(f.jobs, f.api.Object(kJobPath));
  REQUIRE(f.reconciler.Reconcile("ns/train").ok());
  CHECK(f.api.RequestsMatching("POST", kPvcsPath).empty());
  CHECK(f.api.Has(kPodGroupPath));
  CHECK(f.Field({"status", "controlledResources", "volume-pvc-shared"}) == "shared");
  CHECK(f.Field({"status", "state", "reason"}).empty());
}

}  // namespace
}  // namespace basalt::controllers
