#include "scheduler/cache/convert.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "common/util/json.h"
#include "fmt/format.h"

namespace basalt::sched::cache {
namespace {

using Op = NodeSelectorRequirement::Operator;

TEST_CASE("convert: pod affinity terms parse once, with the pod's namespace as default",
          "[sched][convert]") {
  auto none = ParsePodAffinity("", "ns");
  REQUIRE(none.ok());
  CHECK(*none == nullptr);
  auto node_only = ParsePodAffinity(
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}})",
      "ns");
  REQUIRE(node_only.ok());
  CHECK(*node_only == nullptr);

  auto pa = ParsePodAffinity(R"({
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchLabels": {"app": "db"},
                         "matchExpressions": [{"key": "tier", "operator": "NotIn",
                                               "values": ["x", "y"]}]},
       "topologyKey": "topology.kubernetes.io/zone"}]},
    "podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
         "namespaces": ["a", "b"], "topologyKey": "kubernetes.io/hostname"},
        {"namespaceSelector": {}, "topologyKey": "kubernetes.io/hostname"}],
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 30, "podAffinityTerm": {"labelSelector": {},
                                           "topologyKey": "kubernetes.io/hostname"}}]}})",
                             "team");
  REQUIRE(pa.ok());
  REQUIRE(*pa != nullptr);
  const PodAffinity& a = **pa;
  REQUIRE(a.required_affinity.size() == 1);
  const PodAffinityTerm& db = a.required_affinity[0];
  CHECK(db.topology_key == "topology.kubernetes.io/zone");
  CHECK(db.namespaces == std::vector<std::string>{"team"});
  REQUIRE(db.selector.has_value());
  CHECK(db.selector->match_labels ==
        std::vector<std::pair<std::string, std::string>>{{"app", "db"}});
  REQUIRE(db.selector->match_expressions.size() == 1);
  CHECK(db.selector->match_expressions[0].op == Op::kNotIn);
  CHECK(db.MatchesPod("team", {{"app", "db"}}));
  CHECK_FALSE(db.MatchesPod("team", {{"app", "db"}, {"tier", "x"}}));
  CHECK_FALSE(db.MatchesPod("other", {{"app", "db"}}));

  REQUIRE(a.required_anti_affinity.size() == 2);
  CHECK(a.required_anti_affinity[0].namespaces == std::vector<std::string>{"a", "b"});
  CHECK(a.required_anti_affinity[0].MatchesPod("b", {{"app", "x"}}));
  CHECK_FALSE(a.required_anti_affinity[0].MatchesPod("team", {{"app", "x"}}));
  // No labelSelector: matches no pod, in any namespace.
  CHECK_FALSE(a.required_anti_affinity[1].selector.has_value());
  CHECK_FALSE(a.required_anti_affinity[1].MatchesPod("team", {}));
  REQUIRE(a.preferred_anti_affinity.size() == 1);
  CHECK(a.preferred_anti_affinity[0].weight == 30);
  CHECK(a.preferred_anti_affinity[0].term.MatchesPod("team", {{"any", "thing"}}));

  CHECK_FALSE(
      ParsePodAffinity(R"({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
       "topologyKey": "k"}]}})",
                       "ns")
          .ok());
}

TEST_CASE("convert: ToTaskInfo carries labels, host ports with defaults and shared affinity",
          "[sched][convert]") {
  CachedPod cached;
  // std::string temporaries: assigning literals trips GCC 12's -Wrestrict false positive at -O3.
  cached.pod.namespace_name = std::string("ns");
  cached.pod.name = std::string("p");
  cached.pod.uid = std::string("u");
  cached.pod.labels = {{"app", "web"}, {"tier", "front"}};
  cached.pod.host_ports = {api::HostPort{80, "", ""}, api::HostPort{53, "UDP", "10.0.0.1"}};
  cached.pod.affinity_json =
      R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"web"}},"topologyKey":"kubernetes.io/hostname"}]}})";
  TaskInfo t = ToTaskInfo(cached, "");
  CHECK(t.labels == std::map<std::string, std::string>{{"app", "web"}, {"tier", "front"}});
  CHECK(t.host_ports == std::vector<HostPort>{{"TCP", "0.0.0.0", 80}, {"UDP", "10.0.0.1", 53}});
  REQUIRE(t.pod_affinity != nullptr);
  CHECK(t.pod_affinity->required_anti_affinity.size() == 1);
  TaskInfo copy = t;  // snapshot copies share the parsed terms
  CHECK(copy.pod_affinity.get() == t.pod_affinity.get());
}

TEST_CASE("convert: pods with equal labels, node selector and tolerations share one value each",
          "[sched][convert]") {
  auto pod = [](std::string uid, std::string app) {
    CachedPod cached;
    cached.pod.namespace_name = std::string("ns");
    cached.pod.name = uid;
    cached.pod.uid = std::move(uid);
    cached.pod.labels = {{"app", std::move(app)}};
    cached.pod.node_selector = {{"accelerator", "a100"}};
    api::Toleration gpu;
    gpu.key = std::string("nvidia.com/gpu");
    gpu.op = std::string("Exists");
    gpu.effect = std::string("NoSchedule");
    cached.pod.tolerations = {gpu};
    return cached;
  };
  TaskInfo a = ToTaskInfo(pod("u1", "web"), "");
  TaskInfo b = ToTaskInfo(pod("u2", "web"), "");
  TaskInfo c = ToTaskInfo(pod("u3", "db"), "");
  CHECK(a.labels.SharesWith(b.labels));
  CHECK_FALSE(a.labels.SharesWith(c.labels));
  CHECK(c.labels->at("app") == "db");
  CHECK(a.node_selector.SharesWith(c.node_selector));
  CHECK(a.tolerations.SharesWith(c.tolerations));
  REQUIRE(a.tolerations.size() == 1);
  CHECK(a.tolerations->front().op == Toleration::Operator::kExists);
  CHECK(a.tolerations->front().effect == TaintEffect::kNoSchedule);
}

TEST_CASE("convert: the pod store keeps placement inputs once, shared by every task made from it",
          "[sched][convert]") {
  const std::string text = R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
      "labels": {"app": "web", "volcano.sh/task-spec": "worker"}},
    "spec": {"schedulerName": "volcano", "nodeSelector": {"accelerator": "a100"},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
      "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}],
        "resources": {"requests": {"cpu": "500m", "nvidia.com/gpu": "1"}}}]},
    "status": {"phase": "Pending"}})";
  absl::StatusOr<json::Document> doc = json::Parse(text);
  REQUIRE(doc.ok());
  absl::StatusOr<informer::Object> obj = CachedPodTransform().Apply(*std::move(doc));
  REQUIRE(obj.ok());
  const CachedPod& cached = obj->As<CachedPod>();
  REQUIRE(cached.task_inputs_prepared);
  // The compact pod's copies are gone: the task forms are the only ones kept.
  CHECK(cached.pod.labels.empty());
  CHECK(cached.pod.labels.capacity() == 0);
  CHECK(cached.pod.tolerations.capacity() == 0);
  CHECK(cached.pod.node_selector.empty());
  CHECK(cached.pod.host_ports.empty());
  CHECK(cached.pod.affinity_json.empty());
  CHECK(cached.pod.request.empty());

  TaskInfo t = ToTaskInfo(cached, "ns/job");
  CHECK(t.labels.SharesWith(cached.labels));
  CHECK(t.node_selector.SharesWith(cached.node_selector));
  CHECK(t.tolerations.SharesWith(cached.tolerations));
  CHECK(t.affinity.SharesWith(cached.affinity));
  CHECK(t.host_ports.SharesWith(cached.host_ports));
  CHECK(t.labels ==
        std::map<std::string, std::string>{{"app", "web"}, {"volcano.sh/task-spec", "worker"}});
  CHECK(t.node_selector == std::map<std::string, std::string>{{"accelerator", "a100"}});
  REQUIRE(t.tolerations.size() == 1);
  CHECK(t.tolerations->front().key == "nvidia.com/gpu");
  REQUIRE(t.affinity->required.has_value());
  CHECK(t.affinity->required->size() == 1);
  CHECK(t.host_ports == std::vector<HostPort>{{"TCP", "0.0.0.0", 8080}});
  CHECK(t.resreq.milli_cpu() == 500);
  CHECK(t.resreq.Get("nvidia.com/gpu") == 1000);
  CHECK(t.role == "worker");
  CHECK(t.job_id == "ns/job");
}

TEST_CASE("convert: the cached PodGroup keeps what the scheduler reads, not the document",
          "[sched][convert]") {
  const std::string text = R"({
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "job", "namespace": "ns", "uid": "pg-uid", "resourceVersion": "42",
      "creationTimestamp": "2026-12-04T08:00:00Z",
      "labels": {"volcano.sh/preemptable": "false"},
      "annotations": {"volcano.sh/task-topology-affinity": "ps,worker", "other": "x"},
      "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "name": "job", "uid": "job-uid", "controller": true}]},
    "spec": {"minMember": 3, "queue": "", "priorityClassName": "high",
      "minResources": {"cpu": "3", "nvidia.com/gpu": "2"}, "unknownField": 1},
    "status": {"phase": "Inqueue", "running": 1}})";
  absl::StatusOr<json::Document> doc = json::Parse(text);
  REQUIRE(doc.ok());
  absl::StatusOr<informer::Object> obj = PodGroupTransform().Apply(*std::move(doc));
  REQUIRE(obj.ok());
  const CachedPodGroup& pg = obj->As<CachedPodGroup>();
  CHECK(pg.namespace_name == "ns");
  CHECK(pg.name == "job");
  CHECK(pg.uid == "pg-uid");
  CHECK(pg.resource_version == "42");
  REQUIRE(pg.controller.has_value());
  CHECK(pg.controller->uid == "job-uid");
  CHECK(pg.preemptable == "false");  // the label, as no annotation is set
  CHECK(pg.task_topology_annotations ==
        std::map<std::string, std::string>{{"volcano.sh/task-topology-affinity", "ps,worker"}});

  JobInfo job = ToJobInfo(pg, "default");
  absl::StatusOr<api::PodGroup> whole = api::PodGroup::Parse(text);
  REQUIRE(whole.ok());
  JobInfo from_whole = ToJobInfo(*whole, "default");
  CHECK(job.uid == "ns/job");
  CHECK(job.queue == "default");
  CHECK(job.min_available == 3);
  CHECK(job.priority_class_name == "high");
  CHECK(job.not_preemptable);
  CHECK_FALSE(job.preemptable);
  REQUIRE(job.min_resources.has_value());
  CHECK(*job.min_resources == *from_whole.min_resources);
  CHECK(job.min_resources->Get("nvidia.com/gpu") == 2000);
  CHECK(job.creation_time == from_whole.creation_time);
  CHECK(job.creation_time != Timestamp{});
  CHECK(job.podgroup_status.phase == PodGroupPhase::kInqueue);
  CHECK(job.podgroup_status.running == 1);
  CHECK(job.task_topology_annotations == from_whole.task_topology_annotations);
}

}  // namespace
}  // namespace basalt::sched::cache

namespace basalt::sched::cache {
namespace {

TEST_CASE("convert: a queue capability of 0 for an extended resource is a limit, cpu 0 is unset",
          "[sched][cache]") {
  absl::StatusOr<api::Queue> q = api::Queue::Parse(
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},)"
      R"("spec":{"weight":1,"capability":{"cpu":"0","memory":"8Gi","nvidia.com/gpu":"0"}}})");
  REQUIRE(q.ok());
  QueueInfo info = ToQueueInfo(*q);
  REQUIRE(info.capability.has_value());
  CHECK(info.capability->Has("nvidia.com/gpu"));
  CHECK(info.capability->Get("nvidia.com/gpu") == 0);
  CHECK(info.capability->Get("memory") == int64_t{8} << 30);
  // A job asking for one GPU does not fit under that capability.
  Resource one_gpu;
  one_gpu.SetUnits("nvidia.com/gpu", 1);
  CHECK_FALSE(one_gpu.LessEqualOn(*info.capability, one_gpu, MissingAs::kInfinity));
}

}  // namespace
}  // namespace basalt::sched::cache

namespace basalt::sched::cache {
namespace {

TEST_CASE("convert: a PodGroup's subGroupPolicy groups the job's tasks by partition",
          "[sched][convert][partitions]") {
  // As the job controller writes it for a task "w" with partitionPolicy partitionSize 4.
  absl::StatusOr<api::PodGroup> pg = api::PodGroup::Parse(R"({
    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "job", "namespace": "ns"},
    "spec": {"minMember": 8, "queue": "q",
      "subGroupPolicy": [
        {"name": "w", "subGroupSize": 4, "minSubGroups": 2,
         "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "w"}},
         "matchLabelKeys": ["volcano.sh/partition-id"],
         "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
        {"name": "bare"}]}})");
  REQUIRE(pg.ok());
  REQUIRE(pg->spec().sub_group_policy.size() == 2);
  CHECK(pg->spec().sub_group_policy[1].sub_group_size == 1);  // Volcano's default
  JobInfo job = ToJobInfo(*pg, "default");
  REQUIRE(job.sub_group_policies.size() == 2);
  const SubGroupPolicy& w = job.sub_group_policies[0];
  CHECK(w.name == "w");
  CHECK(w.sub_group_size == 4);
  CHECK(w.min_sub_groups == 2);
  CHECK(w.match_label_keys == std::vector<std::string>{"volcano.sh/partition-id"});
  REQUIRE(w.network_topology.has_value());
  CHECK(w.network_topology->hard);
  CHECK(w.network_topology->highest_tier == 1);
  REQUIRE(w.selector.has_value());

  auto task = [](std::string name, std::map<std::string, std::string> labels) {
    TaskInfo t;
    t.uid = name;
    t.name = std::move(name);
    t.job_id = "ns/job";
    t.labels = LabelSet(labels);
    return t;
  };
  size_t policy = 9;
  CHECK(job.SubGroupOf(task("a", {{"volcano.sh/task-spec", "w"}, {"volcano.sh/partition-id", "1"}}),
                       &policy) == "w-1");
  CHECK(policy == 0);
  // A pod of another task falls through to the selector-less policy "bare" (no keys: one group).
  CHECK(job.SubGroupOf(task("b", {{"volcano.sh/task-spec", "ps"}}), &policy) == "bare");
  CHECK(policy == 1);
  // Without "bare", a w pod lacking the partition label is in no sub-group: the job's own gang.
  job.sub_group_policies.pop_back();
  CHECK_FALSE(job.SubGroupOf(task("c", {{"volcano.sh/task-spec", "w"}}), nullptr).has_value());
  CHECK_FALSE(job.SubGroupOf(task("d", {{"volcano.sh/task-spec", "ps"}}), nullptr).has_value());

  // minSubGroups: complete sub-groups are counted per policy.
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < 4; ++i) {
      TaskInfo t =
          task(fmt::format("w-{}-{}", p, i),
               {{"volcano.sh/task-spec", "w"}, {"volcano.sh/partition-id", std::to_string(p)}});
      t.status = p == 0 ? TaskStatus::kAllocated : TaskStatus::kPending;
      REQUIRE(job.AddTask(std::move(t)) != nullptr);
    }
  }
  std::map<std::string, SubGroup> groups = job.SubGroups();
  REQUIRE(groups.size() == 2);
  CHECK(groups.at("w-0").Complete());
  CHECK_FALSE(groups.at("w-1").Complete());
  CHECK(groups.at("w-1").tasks.size() == 4);
  CHECK(job.SubGroupsShort() == "1/2 sub-groups of w complete");
}

}  // namespace
}  // namespace basalt::sched::cache
