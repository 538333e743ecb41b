#include "common/api/compact.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/api/core.h"

namespace {

using basalt::api::CompactPod;
using basalt::api::HostPort;
using basalt::api::Pod;

// A pod with host ports on an app container, a plain init container and a sidecar.
constexpr std::string_view kPortsPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "exporter-0", "namespace": "monitoring", "uid": "u1",
               "labels": {"app": "exporter", "tier": "infra"}},
  "spec": {
    "schedulerName": "volcano",
    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchLabels": {"app": "exporter"}},
       "topologyKey": "kubernetes.io/hostname"}]}},
    "initContainers": [
      {"name": "setup", "image": "busybox",
       "ports": [{"containerPort": 7000, "hostPort": 7000}]},
      {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
       "ports": [{"containerPort": 15001, "hostPort": 15001, "protocol": "TCP"},
                 {"containerPort": 15090}]}],
    "containers": [
      {"name": "main", "image": "exporter",
       "ports": [{"containerPort": 9100, "hostPort": 9100},
                 {"containerPort": 53, "hostPort": 5353, "protocol": "UDP",
                  "hostIP": "10.0.0.5"},
                 {"containerPort": 8080}]}]
  }
})";

TEST_CASE("CompactPod: carries labels and the host ports of containers and sidecars",
          "[api][compact]") {
  auto pod = Pod::Parse(kPortsPod);
  REQUIRE(pod.ok());
  CompactPod c = basalt::api::ToCompactPod(*pod);
  CHECK(c.labels ==
        std::vector<std::pair<std::string, std::string>>{{"app", "exporter"}, {"tier", "infra"}});
  // The plain init container's port (7000) has been released before the pod runs; ports without
  // a hostPort bind nothing on the node.
  CHECK(c.host_ports ==
        std::vector<HostPort>{{15001, "TCP", ""}, {9100, "", ""}, {5353, "UDP", "10.0.0.5"}});
  CHECK(c.affinity_json.find("podAntiAffinity") != std::string::npos);
}

TEST_CASE("CompactPod: a pod without ports or labels has empty lists", "[api][compact]") {
  auto pod = Pod::Parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "i"}]}})");
  REQUIRE(pod.ok());
  CompactPod c = basalt::api::ToCompactPod(*pod);
  CHECK(c.labels.empty());
  CHECK(c.host_ports.empty());
  CHECK(c.gpu_attributes == nullptr);
}

TEST_CASE("CompactPod: carries the parsed gpu.basalt.dev annotations", "[api][compact]") {
  auto pod = Pod::Parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "annotations": {
      "gpu.basalt.dev/min-memory": "16Gi", "gpu.basalt.dev/products": "NVIDIA-A10,NVIDIA-A30",
      "gpu.basalt.dev/nonsense": "x", "other.io/a": "b"}},
    "spec": {"containers": [{"name": "c", "image": "i"}]}})");
  REQUIRE(pod.ok());
  CompactPod c = basalt::api::ToCompactPod(*pod);
  REQUIRE(c.gpu_attributes != nullptr);
  CHECK(c.gpu_attributes->min_memory_mib == 16384);
  CHECK(c.gpu_attributes->products == std::vector<std::string>{"NVIDIA-A10", "NVIDIA-A30"});
  // The unknown key is kept as the reason the scheduler gives for placing the pod nowhere.
  CHECK(c.gpu_attributes->invalid.rfind("gpu.basalt.dev/nonsense: unknown annotation", 0) == 0);
}

}  // namespace

namespace {

CompactPod PodWith(std::string_view metadata_extra, std::string_view spec_extra = "") {
  std::string json = std::string(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u")") +
                     std::string(metadata_extra) + R"(},
    "spec": {"containers": [{"name": "c", "image": "i"}])" +
                     std::string(spec_extra) + "}}";
  auto pod = Pod::Parse(json);
  REQUIRE(pod.ok());
  return basalt::api::ToCompactPod(*pod);
}

TEST_CASE("CompactPod: volcano.sh/preemptable as Volcano reads it, annotation before label",
          "[api][compact]") {
  CHECK(PodWith("").preemptable);
  CHECK_FALSE(PodWith(R"(, "annotations": {"volcano.sh/preemptable": "false"})").preemptable);
  CHECK_FALSE(PodWith(R"(, "labels": {"volcano.sh/preemptable": "0"})").preemptable);
  CHECK(PodWith(R"(, "labels": {"volcano.sh/preemptable": "True"})").preemptable);
  // A value Go's ParseBool refuses means not preemptable.
  CHECK_FALSE(PodWith(R"(, "annotations": {"volcano.sh/preemptable": "no"})").preemptable);
  CHECK(PodWith(R"(, "annotations": {"volcano.sh/preemptable": "true"},
                   "labels": {"volcano.sh/preemptable": "false"})")
            .preemptable);
  CHECK(PodWith("", R"(, "preemptionPolicy": "Never")").preemption_policy == "Never");
}

}  // namespace
