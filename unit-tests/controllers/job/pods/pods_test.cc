#include "controllers/job/pods/pods.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/api/task_topology.h"
#include "common/api/vocabulary.h"
#include "unit-tests/controllers/job/job_builder.h"

namespace basalt::controllers {
namespace {

using testing::MakeJob;
using testing::MakeTask;
using testing::StringAt;

api::Job Job() {
  return MakeJob("bert")
      .Namespace("ml")
      .Uid("uid-7")
      .Queue("research")
      .SchedulerName("volcano")
      .PriorityClass("high")
      .Version(3)
      .RetryCount(1)
      .Label(std::string(api::kPreemptableKey), "true")
      .Label("team", "nlp")
      .Annotation(std::string(api::kCooldownTimeKey), "60s")
      .Annotation(std::string(api::kJdbMaxUnavailableKey), "1")
      .Annotation("unrelated", "x")
      .Task(MakeTask("worker")
                .Replicas(2)
                .TopologyPolicy("single-numa-node")
                .TemplateLabel("app", "bert")
                .TemplateAnnotation("note", "keep")
                .Container("main", "trainer:1")
                .Request("cpu", "2")
                .InitContainer("init")
                .SpecJson("tolerations", R"([{"key": "gpu", "operator": "Exists"}])")
                .SpecJson("futureField", R"({"nested": [1, 2]})"))
      .Task(MakeTask("")
                .Replicas(1)
                .Container("c")
                .SpecField("schedulerName", "other")
                .PriorityClass("low"))
      .Build();
}

TEST_CASE("JobPods: a pod carries the name, labels and annotations of its task",
          "[controllers][job][pods]") {
  const api::Job job = Job();
  auto pod = BuildPod(job, job.spec().tasks[0], 1);
  REQUIRE(pod.ok());
  const json::Value& p = *pod;
  CHECK(StringAt(p, {"apiVersion"}) == "v1");
  CHECK(StringAt(p, {"kind"}) == "Pod");
  CHECK(StringAt(p, {"metadata", "name"}) == "bert-worker-1");
  CHECK(StringAt(p, {"metadata", "namespace"}) == "ml");

  struct KV {
    std::string_view key;
    std::string_view value;
  };
  for (const KV& kv : std::vector<KV>{
           {api::kTaskIndexKey, "1"},
           {api::kTaskSpecKey, "worker"},
           {api::kGroupNameAnnotation, "bert"},
           {api::kJobNameKey, "bert"},
           {api::kQueueNameKey, "research"},
           {api::kJobVersionKey, "3"},
           {api::kTemplateUidKey, "bert-worker"},
           {api::kJobRetryCountKey, "1"},
           {api::kNumaTopologyPolicyKey, "single-numa-node"},
           {api::kCooldownTimeKey, "60s"},
           {api::kJdbMaxUnavailableKey, "1"},
           {"note", "keep"},
       }) {
    INFO(kv.key);
    CHECK(StringAt(p, {"metadata", "annotations", kv.key}) == kv.value);
  }
  CHECK(json::FindPath(p, {"metadata", "annotations", "unrelated"}) == nullptr);
  CHECK(json::FindPath(p, {"metadata", "annotations", api::kPreemptableKey}) == nullptr);
  for (const KV& kv : std::vector<KV>{
           {api::kTaskIndexKey, "1"},
           {api::kJobNameKey, "bert"},
           {api::kTaskSpecKey, "worker"},
           {api::kJobNamespaceKey, "ml"},
           {api::kQueueNameKey, "research"},
           {api::kPreemptableKey, "true"},
           {"app", "bert"},
       }) {
    INFO(kv.key);
    CHECK(StringAt(p, {"metadata", "labels", kv.key}) == kv.value);
  }
  CHECK(json::FindPath(p, {"metadata", "labels", "team"}) == nullptr);
}

TEST_CASE("JobPods: a pod has one controller ownerReference to its Job",
          "[controllers][job][pods]") {
  const api::Job job = Job();
  auto pod = BuildPod(job, job.spec().tasks[0], 0);
  REQUIRE(pod.ok());
  const json::Value* owners = json::FindPath(*pod, {"metadata", "ownerReferences"});
  REQUIRE(owners != nullptr);
  REQUIRE(owners->Size() == 1);
  const json::Value& o = (*owners)[0];
  CHECK(json::GetString(o, "apiVersion") == "batch.volcano.sh/v1alpha1");
  CHECK(json::GetString(o, "kind") == "Job");
  CHECK(json::GetString(o, "name") == "bert");
  CHECK(json::GetString(o, "uid") == "uid-7");
  CHECK(json::GetBool(o, "controller"));
  CHECK(json::GetBool(o, "blockOwnerDeletion"));
}

TEST_CASE("JobPods: template fields stay untouched, unknown ones included",
          "[controllers][job][pods]") {
  const api::Job job = Job();
  auto pod = BuildPod(job, job.spec().tasks[0], 0);
  REQUIRE(pod.ok());
  const json::Value* spec = json::Find(*pod, "spec");
  REQUIRE(spec != nullptr);
  CHECK(json::Serialize(*json::Find(*spec, "futureField")) == R"({"nested":[1,2]})");
  CHECK(json::Serialize(*json::Find(*spec, "tolerations")) ==
        R"([{"key":"gpu","operator":"Exists"}])");
  CHECK(json::Serialize(*json::Find(*spec, "containers")) ==
        R"([{"name":"main","image":"trainer:1","resources":{"requests":{"cpu":"2"}}}])");
  // The Job's schedulerName and priorityClassName fill empty template fields only.
  CHECK(json::GetString(*spec, "schedulerName") == "volcano");
  CHECK(json::GetString(*spec, "priorityClassName") == "high");
  auto other = BuildPod(job, job.spec().tasks[1], 0);
  REQUIRE(other.ok());
  CHECK(StringAt(*other, {"spec", "schedulerName"}) == "other");
  CHECK(StringAt(*other, {"spec", "priorityClassName"}) == "low");
  // The template itself is not modified.
  CHECK(json::FindPath(*job.spec().tasks[0].pod_template, {"spec", "schedulerName"}) == nullptr);
}

TEST_CASE("JobPods: a task without a name is task-spec 'default'", "[controllers][job][pods]") {
  const api::Job job = Job();
  auto pod = BuildPod(job, job.spec().tasks[1], 0);
  REQUIRE(pod.ok());
  CHECK(StringAt(*pod, {"metadata", "name"}) == "bert--0");
  CHECK(StringAt(*pod, {"metadata", "annotations", api::kTaskSpecKey}) == "default");
  CHECK(StringAt(*pod, {"metadata", "labels", api::kTaskSpecKey}) == "default");
  CHECK(json::FindPath(*pod, {"metadata", "annotations", api::kNumaTopologyPolicyKey}) == nullptr);
}

TEST_CASE("JobPods: jdb-min-available is preferred over jdb-max-unavailable",
          "[controllers][job][pods]") {
  api::Job job = Job();
  job.SetAnnotation(api::kJdbMinAvailableKey, "2");
  auto pod = BuildPod(job, job.spec().tasks[0], 0);
  REQUIRE(pod.ok());
  CHECK(StringAt(*pod, {"metadata", "annotations", api::kJdbMinAvailableKey}) == "2");
  CHECK(json::FindPath(*pod, {"metadata", "annotations", api::kJdbMaxUnavailableKey}) == nullptr);
}

TEST_CASE("JobPods: job volumes mount into regular containers only, once per claim",
          "[controllers][job][pods]") {
  api::Job job =
      MakeJob("j")
          .Volume("/data", "data-pvc")
          .Volume("/data2", "data-pvc")
          .Volume("/pending", "")
          .Task(MakeTask("t").Replicas(1).Container("a").Container("b").InitContainer("i"))
          .Build();
  auto pod = BuildPod(job, job.spec().tasks[0], 0);
  REQUIRE(pod.ok());
  const json::Value* vols = json::FindPath(*pod, {"spec", "volumes"});
  REQUIRE(vols != nullptr);
  REQUIRE(vols->Size() == 1);
  const std::string name = PodVolumeName("j", "data-pvc");
  CHECK(name.size() == std::string("j-").size() + 12);
  CHECK(json::GetString((*vols)[0], "name") == name);
  CHECK(StringAt((*vols)[0], {"persistentVolumeClaim", "claimName"}) == "data-pvc");
  for (const auto& c : json::FindPath(*pod, {"spec", "containers"})->GetArray()) {
    const json::Value* mounts = json::Find(c, "volumeMounts");
    REQUIRE(mounts != nullptr);
    REQUIRE(mounts->Size() == 1);
    CHECK(json::GetString((*mounts)[0], "mountPath") == "/data");
  }
  CHECK(json::Find((*json::FindPath(*pod, {"spec", "initContainers"}))[0], "volumeMounts") ==
        nullptr);
  CHECK(PodVolumeName("j", "data-pvc") == name);  // deterministic
  CHECK(PodVolumeName("j", "other") != name);
}

TEST_CASE("JobPods: sync creates missing pods and removes scaled-down ones",
          "[controllers][job][pods]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("master").Replicas(1))
                     .Task(MakeTask("worker").Replicas(2))
                     .Build();
  std::vector<PodSnapshot> pods = {
      {"j-master-0", "master", "Succeeded", false, std::nullopt},  // finished: not re-created
      {"j-worker-1", "worker", "Failed", false, std::nullopt},
      {"j-worker-2", "worker", "Running", false, std::nullopt},  // beyond replicas
      {"j-worker-3", "worker", "Running", true, std::nullopt},   // already going
      {"j-ps-0", "ps", "Running", false, std::nullopt},          // task removed
  };
  PodSyncPlan plan = PlanPodSync(job, pods);
  REQUIRE(plan.create.size() == 1);
  CHECK(plan.create[0].task == "worker");
  CHECK(plan.create[0].index == 0);
  CHECK(plan.remove == std::vector<std::string>{"j-worker-2", "j-ps-0"});

  // A pod an earlier kill marked but failed to delete is deleted now (and not re-created yet).
  pods[1].out_of_sync = true;
  CHECK(PlanPodSync(job, pods).remove ==
        std::vector<std::string>{"j-worker-1", "j-worker-2", "j-ps-0"});
  CHECK(PlanPodSync(job, pods).create.size() == 1);

  // A task whose dependencies are not ready gets no pods yet.
  PodSyncPlan waiting =
      PlanPodSync(job, {}, [](const api::TaskSpec& t) { return t.name != "worker"; });
  REQUIRE(waiting.create.size() == 1);
  CHECK(waiting.create[0].task == "master");
}

TEST_CASE("JobPods: a billion-replica task plans one bounded batch, skipping existing pods",
          "[controllers][job][pods]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("worker").Replicas(1'000'000'000))
                     .Task(MakeTask("ps").Replicas(2))
                     .Build();
  std::vector<PodSnapshot> pods = {
      {"j-worker-0", "worker", "Running", false, std::nullopt},
      {"j-worker-2", "worker", "Pending", false, std::nullopt},
      {"j-worker-999999999", "worker", "Running", false, std::nullopt},   // the last index
      {"j-worker-1000000000", "worker", "Running", false, std::nullopt},  // beyond replicas
      {"j-worker-01", "worker", "Running", false, std::nullopt},          // not a name Basalt makes
  };
  PodSyncPlan plan = PlanPodSync(
      job, pods, [](const api::TaskSpec&) { return true; }, 5);
  CHECK(plan.more_missing);
  REQUIRE(plan.create.size() == 5);
  std::vector<int32_t> indexes;
  for (const auto& c : plan.create) {
    CHECK(c.task == "worker");
    indexes.push_back(c.index);
  }
  CHECK(indexes == std::vector<int32_t>{1, 3, 4, 5, 6});
  CHECK(plan.remove == std::vector<std::string>{"j-worker-1000000000", "j-worker-01"});

  // The default budget: kMaxPodCreatesPerSync, whatever the replicas.
  PodSyncPlan full = PlanPodSync(job, pods);
  CHECK(full.create.size() == kMaxPodCreatesPerSync);
  CHECK(full.more_missing);

  // Once the big task is complete the next task's pods come, and nothing is left over.
  api::Job small =
      MakeJob("j").Task(MakeTask("worker").Replicas(2)).Task(MakeTask("ps").Replicas(2)).Build();
  PodSyncPlan rest = PlanPodSync(
      small, pods, [](const api::TaskSpec&) { return true; }, 5);
  CHECK_FALSE(rest.more_missing);
  REQUIRE(rest.create.size() == 3);
  CHECK(rest.create[0].task == "worker");
  CHECK(rest.create[0].index == 1);
  CHECK(rest.create[1].task == "ps");
  CHECK(rest.create[2].task == "ps");
}

TEST_CASE("JobPods: pods are created in the job's task-topology task order",
          "[controllers][job][pods]") {
  auto make = [](std::optional<std::string> order) {
    auto b = MakeJob("j")
                 .Task(MakeTask("ps").Replicas(1))
                 .Task(MakeTask("chief").Replicas(1))
                 .Task(MakeTask("worker").Replicas(2));
    if (order) b.Annotation(std::string(api::kTaskTopologyTaskOrderKey), *order);
    return b.Build();
  };
  auto tasks_of = [](const PodSyncPlan& plan) {
    std::vector<std::string> out;
    for (const auto& c : plan.create) out.push_back(c.task + "-" + std::to_string(c.index));
    return out;
  };
  using V = std::vector<std::string>;
  // No annotation: spec order.
  CHECK(tasks_of(PlanPodSync(make(std::nullopt), {})) ==
        V{"ps-0", "chief-0", "worker-0", "worker-1"});
  // The named tasks first, in the annotation's order; the unnamed ones after, in spec order.
  CHECK(tasks_of(PlanPodSync(make("worker,ps"), {})) ==
        V{"worker-0", "worker-1", "ps-0", "chief-0"});
  CHECK(tasks_of(PlanPodSync(make(" chief , worker"), {})) ==
        V{"chief-0", "worker-0", "worker-1", "ps-0"});
  // The budget applies to that order: the first task named gets the first pods.
  PodSyncPlan bounded = PlanPodSync(
      make("worker"), {}, [](const api::TaskSpec&) { return true; }, 1);
  CHECK(tasks_of(bounded) == V{"worker-0"});
  CHECK(bounded.more_missing);
  // An order naming a task the job does not have (refused by the webhook) is not followed.
  CHECK(tasks_of(PlanPodSync(make("wroker,ps"), {})) ==
        V{"ps-0", "chief-0", "worker-0", "worker-1"});
}

TEST_CASE("JobPods: PodIndexIn reads only names of MakePodName's form",
          "[controllers][job][pods]") {
  CHECK(PodIndexIn("j", "worker", "j-worker-0") == 0);
  CHECK(PodIndexIn("j", "worker", "j-worker-17") == 17);
  CHECK(PodIndexIn("j", "a-1", "j-a-1-0") == 0);
  CHECK_FALSE(PodIndexIn("j", "a", "j-a-1-0").has_value());  // task "a-1", not "a"
  CHECK_FALSE(PodIndexIn("j", "worker", "j-worker-").has_value());
  CHECK_FALSE(PodIndexIn("j", "worker", "j-worker-007").has_value());
  CHECK_FALSE(PodIndexIn("j", "worker", "j-worker-1x").has_value());
  CHECK_FALSE(PodIndexIn("j", "worker", "j-worker-99999999999").has_value());  // > int32
  CHECK_FALSE(PodIndexIn("j", "worker", "k-worker-0").has_value());
  CHECK_FALSE(PodIndexIn("j", "worker", "j-workers-0").has_value());
}

TEST_CASE("JobPods: pods of forwarded jobs are marked", "[controllers][job][pods]") {
  const api::Job job = Job();
  auto pod = BuildPod(job, job.spec().tasks[0], 0, /*forwarded=*/true);
  REQUIRE(pod.ok());
  CHECK(StringAt(*pod, {"metadata", "annotations", api::kJobForwardingKey}) == "true");
  CHECK(StringAt(*pod, {"metadata", "labels", api::kJobForwardingKey}) == "true");
  auto local = BuildPod(job, job.spec().tasks[0], 0);
  CHECK(json::FindPath(*local, {"metadata", "labels", api::kJobForwardingKey}) == nullptr);
}

TEST_CASE("JobPods: partitioned tasks label pods with their partition",
          "[controllers][job][pods]") {
  api::Job job = MakeJob("j").Task(MakeTask("w").Replicas(6).Partitions(3, 2)).Build();
  for (const auto& [index, partition] :
       std::vector<std::pair<int32_t, std::string>>{{0, "0"}, {1, "0"}, {2, "1"}, {5, "2"}}) {
    auto pod = BuildPod(job, job.spec().tasks[0], index);
    REQUIRE(pod.ok());
    CHECK(StringAt(*pod, {"metadata", "labels", api::kPartitionIdKey}) == partition);
  }
  api::Job plain = MakeJob("j").Task(MakeTask("w").Replicas(2)).Build();
  auto pod = BuildPod(plain, plain.spec().tasks[0], 1);
  CHECK(json::FindPath(*pod, {"metadata", "labels", api::kPartitionIdKey}) == nullptr);
}

TEST_CASE("JobPods: dependsOn waits for ready dependency tasks", "[controllers][job][pods]") {
  api::Job job = MakeJob("j")
                     .Task(MakeTask("a").Replicas(2).MinAvailable(2))
                     .Task(MakeTask("b").Replicas(1).MinAvailable(1))
                     .Task(MakeTask("c").Replicas(1))  // no minAvailable: always ready
                     .Task(MakeTask("main").Replicas(1))
                     .Build();
  api::TaskSpec main = job.spec().tasks[3];
  CHECK(TaskDependenciesMet(job, main, {}));  // no dependsOn

  const std::vector<PodSnapshot> a_half = {
      {"j-a-0", "a", "Succeeded", false, std::nullopt, false},
      {"j-a-1", "a", "Running", false, std::nullopt, false},  // running, not ready
  };
  std::vector<PodSnapshot> a_ready = a_half;
  a_ready[1].ready = true;
  std::vector<PodSnapshot> b_ready = {{"j-b-0", "b", "Running", false, std::nullopt, true}};
  std::vector<PodSnapshot> b_going = {{"j-b-0", "b", "Running", true, std::nullopt, true}};

  struct Case {
    std::string name;
    std::vector<std::string> deps;
    std::string iteration;
    std::vector<PodSnapshot> pods;
    bool want;
  };
  auto concat = [](std::vector<PodSnapshot> x, const std::vector<PodSnapshot>& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const std::vector<Case> cases = {
      {"one dependency, not ready", {"a"}, "", a_half, false},
      {"one dependency, ready", {"a"}, "", a_ready, true},
      {"all: one of two ready", {"a", "b"}, "all", a_ready, false},
      {"all: both ready", {"a", "b"}, "", concat(a_ready, b_ready), true},
      {"any: one of two ready", {"a", "b"}, "any", b_ready, true},
      {"any: none ready", {"a", "b"}, "any", a_half, false},
      {"any with one name behaves as all", {"a"}, "any", a_half, false},
      {"terminating pods do not count", {"b"}, "", b_going, false},
      {"a task without minAvailable is ready", {"c"}, "", {}, true},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    main.depends_on = api::DependsOn{c.deps, c.iteration};
    CHECK(TaskDependenciesMet(job, main, c.pods) == c.want);
  }
}

}  // namespace
}  // namespace basalt::controllers
