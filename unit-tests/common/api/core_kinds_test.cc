#include <catch2/catch.hpp>
#include <string>

#include "common/api/compact.h"
#include "common/api/core.h"
#include "common/util/json.h"
#include "common/util/status.h"

namespace {

using basalt::MessageOf;
using basalt::api::CompactNode;
using basalt::api::CompactPod;
using basalt::api::Event;
using basalt::api::EventFields;
using basalt::api::Lease;
using basalt::api::LeaseSpec;
using basalt::api::Namespace;
using basalt::api::Node;
using basalt::api::Pod;
using basalt::api::PodPhase;
using basalt::api::PriorityClass;
using basalt::resource::MustParse;

std::string Normalize(std::string_view text) {
  auto doc = basalt::json::Parse(text);
  REQUIRE(doc.ok());
  return basalt::json::Serialize(*doc);
}

// A worker pod of the bert-pretrain example job as the job controller creates it, after it
// ran and one container was OOM-killed once.
constexpr std::string_view kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "bert-pretrain-worker-0", "namespace": "default", "uid": "pod-uid-0",
    "resourceVersion": "200", "creationTimestamp": "2024-05-01T10:00:10Z",
    "labels": {"volcano.sh/job-name": "bert-pretrain", "volcano.sh/task-spec": "worker"},
    "annotations": {"scheduling.k8s.io/group-name": "bert-pretrain",
                    "volcano.sh/job-version": "0"},
    "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
      "name": "bert-pretrain", "uid": "job-uid-1", "controller": true,
      "blockOwnerDeletion": true}]
  },
  "spec": {
    "schedulerName": "volcano", "nodeName": "gpu-node-1", "priority": 100,
    "priorityClassName": "offline-batch", "preemptionPolicy": "PreemptLowerPriority",
    "restartPolicy": "OnFailure",
    "nodeSelector": {"accelerator": "a100"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                     "effect": "NoExecute", "tolerationSeconds": 300}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
      "nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}]}}},
    "initContainers": [
      {"name": "fetch", "image": "busybox",
       "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
      {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}}}],
    "containers": [
      {"name": "training", "image": "your-registry/train:latest",
       "resources": {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                     "limits": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}}}],
    "overhead": {"cpu": "100m"},
    "volumes": [{"name": "kube-api-access", "projected": {"sources": []}}]
  },
  "status": {
    "phase": "Running", "startTime": "2024-05-01T10:00:20Z", "hostIP": "10.0.0.5",
    "conditions": [{"type": "PodScheduled", "status": "True",
                    "lastTransitionTime": "2024-05-01T10:00:12Z", "lastProbeTime": null},
                   {"type": "Ready", "status": "True",
                    "lastTransitionTime": "2024-05-01T10:01:00Z"}],
    "initContainerStatuses": [{"name": "fetch", "ready": false, "restartCount": 0,
      "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
    "containerStatuses": [{"name": "training", "ready": true, "restartCount": 1,
      "state": {"running": {"startedAt": "2024-05-01T10:05:00Z"}},
      "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]
  }
})";

constexpr std::string_view kNode = R"({
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "gpu-node-1", "uid": "node-uid",
               "labels": {"kubernetes.io/hostname": "gpu-node-1", "accelerator": "a100",
                          "rack": "r1"}},
  "spec": {"unschedulable": false, "podCIDR": "10.244.1.0/24",
           "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule",
                       "timeAdded": "2024-05-01T09:00:00Z"}]},
  "status": {
    "capacity": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110",
                 "ephemeral-storage": "1Ti"},
    "allocatable": {"cpu": "63500m", "memory": "503Gi", "nvidia.com/gpu": "8", "pods": "110",
                    "ephemeral-storage": "900Gi"},
    "conditions": [{"type": "MemoryPressure", "status": "False"},
                   {"type": "Ready", "status": "True", "reason": "KubeletReady"}],
    "nodeInfo": {"kubeletVersion": "v1.30.0"}
  }
})";

}  // namespace

TEST_CASE("Pod: decodes scheduling fields, statuses and exit codes", "[api][pod]") {
  auto pod = Pod::Parse(kPod);
  REQUIRE(pod.ok());
  const auto& spec = pod->spec();
  CHECK(spec.scheduler_name == "volcano");
  CHECK(spec.node_name == "gpu-node-1");
  CHECK(spec.priority == 100);
  CHECK(spec.priority_class_name == "offline-batch");
  CHECK(spec.node_selector.at("accelerator") == "a100");
  REQUIRE(spec.tolerations.size() == 2);
  CHECK(spec.tolerations[0].op == "Exists");
  CHECK(spec.tolerations[1].toleration_seconds == 300);
  CHECK(spec.affinity_json.rfind(R"({"nodeAffinity":)", 0) == 0);
  REQUIRE(spec.containers.size() == 1);
  CHECK(spec.containers[0].requests.Get("nvidia.com/gpu").Value() == 1);
  CHECK(spec.containers[0].limits.Get("memory").String() == "64Gi");
  REQUIRE(spec.init_containers.size() == 2);
  CHECK_FALSE(spec.init_containers[0].restartable);
  CHECK(spec.init_containers[1].restartable);
  CHECK(pod->GroupName() == "bert-pretrain");
  CHECK(pod->status().phase == "Running");
  CHECK_FALSE(pod->IsTerminated());
  REQUIRE(pod->FindCondition("Ready") != nullptr);
  CHECK(pod->FindCondition("Ready")->status == "True");
  REQUIRE(pod->status().container_statuses.size() == 1);
  const auto& cs = pod->status().container_statuses[0];
  CHECK(cs.state == "running");
  CHECK(cs.restart_count == 1);
  CHECK_FALSE(cs.exit_code.has_value());
  CHECK(cs.last_exit_code == 137);
  CHECK(pod->status().init_container_statuses[0].exit_code == 0);
  CHECK(pod->status().init_container_statuses[0].reason == "Completed");
  CHECK(pod->ToJson() == Normalize(kPod));
}

TEST_CASE("Pod: effective request counts init containers, sidecars and overhead", "[api][pod]") {
  auto pod = Pod::Parse(kPod);
  REQUIRE(pod.ok());
  auto req = pod->EffectiveRequest();
  // cpu: max(8 + 0.5 sidecar, 2 init) + 0.1 overhead; memory: 64Gi + 128Mi.
  CHECK(req.Get("cpu") == MustParse("8600m"));
  CHECK(req.Get("memory").String() == "65664Mi");
  CHECK(req.Get("nvidia.com/gpu").Value() == 1);
}

TEST_CASE("Pod: a bad request quantity names the container path", "[api][pod]") {
  auto pod = Pod::Parse(R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns"},)"
                        R"("spec":{"containers":[{"name":"c","resources":{"requests":)"
                        R"({"cpu":"5ZZ"}}}]}})");
  REQUIRE_FALSE(pod.ok());
  CHECK(MessageOf(pod.status())
            .rfind("Pod ns/p: spec.containers[0].resources.requests: resource \"cpu\": invalid "
                   "quantity \"5ZZ\"",
                   0) == 0);
  auto bad_status = Pod::Parse(R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns"},)"
                               R"("status":{"conditions":[{"type":"Ready",)"
                               R"("lastTransitionTime":"yesterday"}]}})");
  REQUIRE_FALSE(bad_status.ok());
  CHECK(MessageOf(bad_status.status()).find("status.conditions[0].lastTransitionTime") !=
        std::string_view::npos);
}

TEST_CASE("Pod: a start time after 2262 stays readable and keeps its text", "[api][pod]") {
  // Fuzzer reproducer: status.startTime in year 8970 overflowed int64 nanoseconds.
  constexpr std::string_view kFarFuture =
      R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns"},)"
      R"("status":{"phase":"Running","startTime":"8970-05-01T10:00:00Z"}})";
  auto pod = Pod::Parse(kFarFuture);
  REQUIRE(pod.ok());
  REQUIRE(pod->status().start_time.has_value());
  CHECK(*pod->status().start_time == basalt::api::Time::max());
  CHECK(pod->ToJson() == Normalize(kFarFuture));  // the object itself is not rewritten
}

TEST_CASE("CompactPod: keeps only scheduling fields", "[api][compact]") {
  auto pod = Pod::Parse(kPod);
  REQUIRE(pod.ok());
  CompactPod c = basalt::api::ToCompactPod(*pod);
  CHECK(c.Key() == "default/bert-pretrain-worker-0");
  CHECK(c.uid == "pod-uid-0");
  CHECK(c.node_name == "gpu-node-1");
  CHECK(c.scheduler_name == "volcano");
  CHECK(c.group_name == "bert-pretrain");
  CHECK(c.owner_uid == "job-uid-1");
  CHECK(c.owner_kind == "Job");
  CHECK(c.task_spec == "worker");
  CHECK(c.phase == PodPhase::kRunning);
  CHECK_FALSE(c.terminating);
  CHECK(c.priority == 100);
  CHECK(c.request.Get("cpu") == MustParse("8600m"));
  CHECK(c.node_selector ==
        std::vector<std::pair<std::string, std::string>>{{"accelerator", "a100"}});
  CHECK(c.tolerations.size() == 2);
  CHECK_FALSE(c.affinity_json.empty());
  CHECK(c.creation_timestamp.has_value());
}

TEST_CASE("Node: decodes allocatable, taints and the Ready condition", "[api][node]") {
  auto node = Node::Parse(kNode);
  REQUIRE(node.ok());
  CHECK(node->allocatable().Get("cpu").MilliValue() == 63500);
  CHECK(node->allocatable().Get("nvidia.com/gpu").Value() == 8);
  CHECK(node->capacity().Get("ephemeral-storage").String() == "1Ti");
  REQUIRE(node->taints().size() == 1);
  CHECK(node->taints()[0].effect == "NoSchedule");
  CHECK(node->taints()[0].time_added.has_value());
  CHECK_FALSE(node->unschedulable());
  CHECK(node->Ready());
  CHECK(node->ToJson() == Normalize(kNode));
  CompactNode c = basalt::api::ToCompactNode(*node);
  CHECK(c.name == "gpu-node-1");
  CHECK(c.ready);
  CHECK(c.labels.size() == 3);
  CHECK(c.allocatable.Get("memory").String() == "503Gi");
}

TEST_CASE("Node: allocatable falls back to capacity and no Ready condition means not ready",
          "[api][node]") {
  auto node = Node::Parse(R"({"kind":"Node","metadata":{"name":"n"},"spec":{"unschedulable":true},)"
                          R"("status":{"capacity":{"cpu":"4"}}})");
  REQUIRE(node.ok());
  CHECK(node->allocatable().Get("cpu").Value() == 4);
  CHECK(node->unschedulable());
  CHECK_FALSE(node->Ready());
}

TEST_CASE("PriorityClass: decodes the examples with the default preemption policy",
          "[api][priorityclass]") {
  // /work/shared/examples/priorityclasses.yaml
  auto online = PriorityClass::Parse(R"({"apiVersion":"scheduling.k8s.io/v1",
    "kind":"PriorityClass","metadata":{"name":"online-critical"},"value":1000000,
    "globalDefault":false,"description":"online core service, must not be preempted"})");
  REQUIRE(online.ok());
  CHECK(online->value() == 1000000);
  CHECK_FALSE(online->global_default());
  CHECK(online->preemption_policy() == "PreemptLowerPriority");
  CHECK(online->description() == "online core service, must not be preempted");
  auto never = PriorityClass::Parse(R"({"kind":"PriorityClass","metadata":{"name":"x"},)"
                                    R"("value":-5,"preemptionPolicy":"Never"})");
  REQUIRE(never.ok());
  CHECK(never->value() == -5);
  CHECK(never->preemption_policy() == "Never");
  auto bad = PriorityClass::Parse(R"({"kind":"PriorityClass","metadata":{"name":"x"},)"
                                  R"("value":"high"})");
  REQUIRE_FALSE(bad.ok());
  CHECK(MessageOf(bad.status()) == "PriorityClass x: value: must be an integer");
}

TEST_CASE("Namespace: reads the phase", "[api][namespace]") {
  auto ns = Namespace::Parse(R"({"apiVersion":"v1","kind":"Namespace",)"
                             R"("metadata":{"name":"team-a"},"status":{"phase":"Terminating"}})");
  REQUIRE(ns.ok());
  CHECK(ns->name() == "team-a");
  CHECK(ns->phase() == "Terminating");
}

TEST_CASE("Lease: decodes MicroTime fields and writes them back with microseconds",
          "[api][lease]") {
  constexpr std::string_view kLease = R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
    "metadata":{"name":"vc-scheduler","namespace":"volcano-system","resourceVersion":"9"},
    "spec":{"holderIdentity":"node-a_1234","leaseDurationSeconds":15,
            "acquireTime":"2024-05-01T10:00:00.000000Z","renewTime":"2024-05-01T10:00:12.345678Z",
            "leaseTransitions":2}})";
  auto lease = Lease::Parse(kLease);
  REQUIRE(lease.ok());
  CHECK(lease->spec().holder_identity == "node-a_1234");
  CHECK(lease->spec().lease_duration_seconds == 15);
  CHECK(lease->spec().lease_transitions == 2);
  REQUIRE(lease->spec().renew_time.has_value());
  CHECK(basalt::api::FormatRfc3339Micro(*lease->spec().renew_time) ==
        "2024-05-01T10:00:12.345678Z");
  CHECK(lease->ToJson() == Normalize(kLease));

  LeaseSpec next = lease->spec();
  next.holder_identity = "node-b_99";
  next.renew_time = basalt::api::ParseRfc3339("2024-05-01T10:00:20.000001Z").value();
  next.lease_transitions = 3;
  lease->SetSpec(next);
  CHECK(lease->spec() == next);
  auto back = Lease::Parse(lease->ToJson());
  REQUIRE(back.ok());
  CHECK(back->spec() == next);
  CHECK(lease->ToJson().find(R"("renewTime":"2024-05-01T10:00:20.000001Z")") != std::string::npos);
  CHECK(back->resource_version() == "9");

  Lease fresh = Lease::Make("volcano-system", "vc-controller-manager");
  CHECK(fresh.ToJson() ==
        R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":)"
        R"({"name":"vc-controller-manager","namespace":"volcano-system"},"spec":{}})");
}

TEST_CASE("Event: Make builds a core/v1 Event for the involved object", "[api][event]") {
  auto pg = basalt::api::Object::Parse(
      R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",)"
      R"("metadata":{"name":"bert-pretrain","namespace":"default","uid":"pg-uid",)"
      R"("resourceVersion":"5"}})");
  REQUIRE(pg.ok());
  EventFields f;
  f.involved_object = basalt::api::ReferenceTo(*pg);
  f.reason = "Unschedulable";
  f.message = "0/8 nodes are unavailable: 4 Insufficient nvidia.com/gpu.";
  f.type = "Warning";
  f.source_component = "volcano";
  f.first_timestamp = basalt::api::ParseRfc3339("2024-05-01T10:00:00Z").value();
  f.last_timestamp = f.first_timestamp;
  Event ev = Event::Make(f, "17c9a2b3d4e5f601");
  CHECK(ev.name() == "bert-pretrain.17c9a2b3d4e5f601");
  CHECK(ev.namespace_name() == "default");
  auto back = Event::Parse(ev.ToJson());
  REQUIRE(back.ok());
  CHECK(back->fields().involved_object == f.involved_object);
  CHECK(back->fields().reason == "Unschedulable");
  CHECK(back->fields().type == "Warning");
  CHECK(back->fields().source_component == "volcano");
  CHECK(back->fields().count == 1);
  auto later = basalt::api::ParseRfc3339("2024-05-01T10:05:00Z").value();
  ev.SetCount(2, later);
  auto again = Event::Parse(ev.ToJson());
  REQUIRE(again.ok());
  CHECK(again->fields().count == 2);
  CHECK(again->fields().last_timestamp == later);
}

TEST_CASE("Pod: a job pod template with limits only requests its limits", "[api][pod]") {
  // Job task templates are not defaulted by the API server (bert-pretrain with limits only).
  auto pod = Pod::Parse(R"({"spec":{"containers":[{"name":"training","resources":)"
                        R"({"limits":{"cpu":8,"memory":"64Gi","nvidia.com/gpu":1}}}]}})");
  REQUIRE(pod.ok());
  auto req = pod->EffectiveRequest();
  CHECK(req.Get("cpu").Value() == 8);
  CHECK(req.Get("nvidia.com/gpu").Value() == 1);
  CHECK(req.Get("memory").String() == "64Gi");
}
