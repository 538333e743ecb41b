// The job reconciler's decisions with every control faked (JobReconcilerOptions::controls): what
// it asks of pod, PodGroup, volume and status I/O for given cached states, and what it does
// when that I/O fails. No request reaches an API server: the client behind the reconciler is
// an in-memory one that each test checks was never called.

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/informer/store.h"
#include "controllers/job/controller/job_reconciler.h"
#include "controllers/job/controller/job_status_writer.h"
#include "controllers/job/controller/plugin_objects.h"
#include "controllers/job/controller/pod_control.h"
#include "controllers/job/controller/pod_group_control.h"
#include "controllers/job/controller/volume_control.h"
#include "unit-tests/controllers/controller/fake_api.h"
#include "unit-tests/controllers/controller/job_fixtures.h"

namespace basalt::controllers {
namespace {

using testing::JobBuilder;

// Creates and deletes what it is asked to, with results the test chooses, and keeps the
// expectations as the real control does (so a visit before the cache shows a pod sees it).
class FakePods : public PodControlInterface {
 public:
  explicit FakePods(Clock* clock) : clock_(clock) {}

  PodCreationResult CreatePods(
      std::string_view /*ns*/, const std::vector<PodCreation>& pods,
      const std::function<absl::StatusOr<json::Document>(const PodCreation&)>& build,
      PodExpectations& expectations) override {
    PodCreationResult out;
    for (const PodCreation& c : pods) {
      if (out.stopped) {
        out.results.push_back(absl::CancelledError("not attempted"));
        continue;
      }
      absl::StatusOr<json::Document> doc = build(c);
      if (!doc.ok()) {
        out.results.push_back(doc.status());
        continue;
      }
      absl::Status s = create_result ? create_result(c) : absl::OkStatus();
      attempted.push_back(c.name);
      if (s.ok()) {
        created.push_back(c.name);
        expectations.ExpectCreated(c.name, clock_->Now());
      } else {
        out.stopped = true;
      }
      out.results.push_back(s);
    }
    return out;
  }
  std::vector<absl::Status> DeletePods(const std::vector<const JobPodInfo*>& pods,
                                       PodExpectations& expectations) override {
    std::vector<absl::Status> out;
    for (const JobPodInfo* p : pods) out.push_back(DeletePod(*p, expectations));
    return out;
  }
  absl::Status DeletePod(const JobPodInfo& pod, PodExpectations& expectations) override {
    absl::Status s = delete_result ? delete_result(pod) : absl::OkStatus();
    if (s.ok()) {
      deleted.push_back(pod.name);
      deleted_uids_.insert(pod.uid);
      expectations.ExpectDeleted(pod.name, pod.uid);
    }
    return s;
  }
  bool DeletedByController(const std::string& uid) const override {
    return deleted_uids_.count(uid) > 0;
  }

  std::function<absl::Status(const PodCreation&)> create_result;
  std::function<absl::Status(const JobPodInfo&)> delete_result;
  std::vector<std::string> attempted, created, deleted;

 private:
  Clock* const clock_;
  std::set<std::string> deleted_uids_;
};

// A PodGroup in the phase the test sets.
class FakePodGroups : public PodGroupControlInterface {
 public:
  absl::StatusOr<Ensured> Ensure(const api::Job& /*job*/, const json::Document& desired,
                                 bool /*lost_while_running*/, PodGroupMemory& /*memory*/,
                                 std::string* problem) override {
    ++ensured;
    last_desired = json::Serialize(desired);
    if (!ensure_error.ok()) {
      *problem = std::string(ensure_error.message());
      return ensure_error;
    }
    return Ensured{phase, false};
  }
  absl::Status Delete(const api::Job& /*job*/, PodGroupMemory& /*memory*/) override {
    ++deletes;
    phase.clear();
    return absl::OkStatus();
  }
  std::optional<api::Condition> PendingCondition(const api::Job& /*job*/) const override {
    return std::nullopt;
  }

  std::string phase;
  absl::Status ensure_error;
  int ensured = 0;
  int deletes = 0;
  std::string last_desired;
};

class FakeVolumes : public VolumeControlInterface {
 public:
  absl::StatusOr<std::optional<json::Document>> NameClaims(const api::Job& /*job*/,
                                                           std::string* /*problem*/) override {
    return std::optional<json::Document>();
  }
  absl::Status EnsureClaims(const api::Job& /*job*/,
                            std::map<std::string, std::string>& /*controlled*/,
                            std::string* /*problem*/) override {
    return absl::OkStatus();
  }
};

class FakePluginObjects : public PluginObjectsInterface {
 public:
  absl::Status Create(std::string_view, const std::vector<json::Document>&) override {
    return absl::OkStatus();
  }
  absl::Status Apply(std::string_view, std::vector<json::Document>) override {
    return absl::OkStatus();
  }
  absl::Status Delete(const std::vector<ObjectRef>&) override { return absl::OkStatus(); }
};

// Keeps each status written; fails the next write when `fail_next` is set.
class FakeStatus : public JobStatusWriterInterface {
 public:
  absl::StatusOr<Written> Write(const api::Job& job, const api::JobStatus& status) override {
    if (!fail_next.ok()) {
      absl::Status s = fail_next;
      fail_next = absl::OkStatus();
      ++failed;
      return s;
    }
    api::Job written = job;
    written.SetStatus(status);
    written.SetResourceVersion(std::to_string(++rv_));
    auto doc = json::Parse(written.ToJson());
    if (!doc.ok()) return doc.status();
    statuses.push_back(status);
    return Written{std::move(written), std::make_shared<json::Document>(std::move(*doc))};
  }
  std::string Phase() const { return statuses.empty() ? "" : statuses.back().state.phase; }

  std::vector<api::JobStatus> statuses;
  absl::Status fail_next;
  int failed = 0;

 private:
  int rv_ = 100;
};

struct Fixture {
  testing::FakeApiServer api;  // must see no request at all
  informer::Store jobs;
  informer::Store pods{{{kPodsByJobIndex, PodsByJobIndexFunc()}}};
  informer::Store pod_groups;
  FakeClock clock;
  FakePods pod_control{&clock};
  FakePodGroups pod_group_control;
  FakeVolumes volume_control;
  FakePluginObjects plugin_objects;
  FakeStatus status;
  JobReconciler reconciler{
      &api.client(), JobListers{&jobs, &pods, &pod_groups, nullptr},
      JobReconcilerOptions{.clock = &clock,
                           .controls = JobControls{&pod_control, &pod_group_control,
                                                   &volume_control, &plugin_objects, &status}}};

  void AddJob(const JobBuilder& b) { testing::CacheObject(jobs, b.Json()); }
  void AddPod(int index, std::string_view phase) {
    testing::CacheObject(pods, testing::PodJson(index, phase));
  }
  ReconcileResult Visit() { return reconciler.Reconcile("ns/train"); }
  // A Running job of two pods whose policy restarts it on PodFailed; pod 1 has just failed.
  void RunningWithFailedPod() {
    AddJob(JobBuilder{.policies = R"([{"event":"PodFailed","action":"RestartJob"}])",
                      .status = R"({"state":{"phase":"Running"},"running":2,"minAvailable":2})"});
    pod_group_control.phase = "Running";
    AddPod(0, "Running");
    AddPod(1, "Failed");
    PodFailed(1);
  }
  void PodFailed(int index) {
    QueuedRequest q;
    q.request.job_uid = "job-uid-1";
    q.request.task = "worker";
    q.request.pod = "train-worker-" + std::to_string(index);
    q.request.event = Event::kPodFailed;
    q.request.exit_code = 1;
    q.pod_uid = "pod-uid-" + std::to_string(index);
    reconciler.AddRequest("ns/train", q);
  }
};

const std::vector<std::string> kBothPods{"train-worker-0", "train-worker-1"};
// The pods a kill deletes come in the cache's order.
std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST_CASE("Job decisions: pods only once the PodGroup is admitted, each created once",
          "[controllers][job-controller][decisions]") {
  Fixture f;
  f.AddJob(JobBuilder{});
  f.pod_group_control.phase = "Pending";
  REQUIRE(f.Visit().ok());
  CHECK(f.pod_group_control.ensured == 1);
  CHECK(f.pod_group_control.last_desired.find(R"("minMember":2)") != std::string::npos);
  CHECK(f.pod_control.attempted.empty());
  CHECK(f.status.Phase() == "Pending");

  f.pod_group_control.phase = "Inqueue";
  REQUIRE(f.Visit().ok());
  CHECK(f.pod_control.created == kBothPods);
  // The cache has not shown the pods yet: the expectations stand in for them.
  REQUIRE(f.Visit().ok());
  CHECK(f.pod_control.attempted == kBothPods);
  CHECK(f.api.Requests().empty());
}

TEST_CASE("Job decisions: a failed creation stops the batch, names the pod, and is retried",
          "[controllers][job-controller][decisions]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Pending"}})"});
  f.pod_group_control.phase = "Inqueue";
  f.pod_control.create_result = [](const PodCreation& c) {
    return c.index == 0 ? absl::UnavailableError("etcd leader changed") : absl::OkStatus();
  };
  ReconcileResult r = f.Visit();
  REQUIRE_FALSE(r.ok());  // the work queue retries the job
  CHECK(absl::IsUnavailable(r.status()));
  CHECK(f.pod_control.created.empty());
  CHECK(f.pod_control.attempted == std::vector<std::string>{"train-worker-0"});  // batch stopped

  f.pod_control.create_result = nullptr;
  REQUIRE(f.Visit().ok());
  CHECK(f.pod_control.created == kBothPods);
  CHECK(f.api.Requests().empty());
}

TEST_CASE("Job decisions: a PodGroup the API server refuses leaves the job without pods",
          "[controllers][job-controller][decisions]") {
  Fixture f;
  f.AddJob(JobBuilder{});
  f.pod_group_control.ensure_error = absl::InvalidArgumentError("spec.minMember: Invalid value");
  REQUIRE_FALSE(f.Visit().ok());
  CHECK(f.pod_control.attempted.empty());
  f.pod_group_control.ensure_error = absl::OkStatus();
  f.pod_group_control.phase = "Inqueue";
  REQUIRE(f.Visit().ok());
  CHECK(f.pod_control.created == kBothPods);
}

TEST_CASE("Job decisions: RestartJob deletes every pod and the PodGroup, once",
          "[controllers][job-controller][decisions]") {
  Fixture f;
  f.RunningWithFailedPod();
  REQUIRE(f.Visit().ok());
  CHECK(Sorted(f.pod_control.deleted) == kBothPods);
  CHECK(f.pod_group_control.deletes == 1);
  CHECK(f.status.Phase() == "Restarting");
  REQUIRE(f.status.statuses.back().retry_count == 1);
  // Again while the cache still lists the pods: they are expected gone, nothing is killed twice.
  REQUIRE(f.Visit().ok());
  CHECK(Sorted(f.pod_control.deleted) == kBothPods);
  CHECK(f.pod_group_control.deletes == 1);
  CHECK(f.api.Requests().empty());
}

TEST_CASE("Job decisions: a kill whose deletion fails is retried whole, its bookkeeping once",
          "[controllers][job-controller][decisions]") {
  Fixture f;
  f.RunningWithFailedPod();
  f.pod_control.delete_result = [](const JobPodInfo& p) {
    return p.name == "train-worker-0" ? absl::UnavailableError("connection reset")
                                      : absl::OkStatus();
  };
  REQUIRE_FALSE(f.Visit().ok());
  CHECK(f.pod_control.deleted == std::vector<std::string>{"train-worker-1"});
  CHECK(f.status.statuses.empty());  // no retryCount counted for a kill that did not finish

  f.pod_control.delete_result = nullptr;
  REQUIRE(f.Visit().ok());
  CHECK(Sorted(f.pod_control.deleted) == kBothPods);
  CHECK(f.status.Phase() == "Restarting");
  CHECK(f.status.statuses.back().retry_count == 1);
}

TEST_CASE("Job decisions: a status write that fails is written again at the next visit",
          "[controllers][job-controller][decisions]") {
  Fixture f;
  f.AddJob(JobBuilder{.status = R"({"state":{"phase":"Running"},"running":2})"});
  f.pod_group_control.phase = "Running";
  f.AddPod(0, "Succeeded");
  f.AddPod(1, "Succeeded");
  f.status.fail_next = absl::UnavailableError("the server is currently unable to handle it");
  REQUIRE_FALSE(f.Visit().ok());
  CHECK(f.status.failed == 1);
  REQUIRE(f.Visit().ok());
  CHECK(f.status.Phase() == "Completed");
  CHECK(f.status.statuses.back().succeeded == 2);
  // Completed: a later visit writes nothing more.
  const size_t writes = f.status.statuses.size();
  REQUIRE(f.Visit().ok());
  CHECK(f.status.statuses.size() == writes);
  CHECK(f.api.Requests().empty());
}

}  // namespace
}  // namespace basalt::controllers
