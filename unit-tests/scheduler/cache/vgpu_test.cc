#include "scheduler/cache/vgpu.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "common/api/compact.h"
#include "common/client/client.h"
#include "common/client/testing/fake_transport.h"
#include "scheduler/cache/binder.h"
#include "scheduler/cache/cluster_state.h"
#include "scheduler/cache/convert.h"

namespace basalt::sched::cache {
namespace {

constexpr char kVgpuPod[] = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "w0", "namespace": "ns", "uid": "uid-w0",
               "annotations": {"scheduling.k8s.io/group-name": "job",
                               "volcano.sh/vgpu-podgroup-policy": "spread",
                               "nvidia.com/use-gputype": "A100, H100"}},
  "spec": {"schedulerName": "volcano", "containers": [
    {"name": "main", "resources": {"limits": {"cpu": "1", "volcano.sh/vgpu-number": "2",
                                              "volcano.sh/vgpu-memory": "4000",
                                              "volcano.sh/vgpu-cores": "30"}}},
    {"name": "side", "resources": {"limits": {"volcano.sh/vgpu-memory": "1000"}}},
    {"name": "pct", "resources": {"limits": {"volcano.sh/vgpu-number": "1",
                                             "volcano.sh/vgpu-memory-percentage": "50"}}},
    {"name": "plain", "resources": {"limits": {"cpu": "1"}}}]}})";

TEST_CASE("vGPU cache: a pod's per-container vGPU requests are read as Volcano reads them",
          "[sched][cache][vgpu]") {
  auto pod = api::Pod::Parse(kVgpuPod);
  REQUIRE(pod.ok());
  std::shared_ptr<const VgpuRequest> req = PodVgpuRequest(*pod);
  REQUIRE(req != nullptr);
  REQUIRE(req->containers.size() == 3);
  CHECK(req->containers[0] == VgpuContainerRequest{2, 4000, kVgpuNoPercentage, 30});
  // vgpu-memory alone asks for one GPU.
  CHECK(req->containers[1] == VgpuContainerRequest{1, 1000, kVgpuNoPercentage, 0});
  CHECK(req->containers[2] == VgpuContainerRequest{1, 0, 50, 0});
  CHECK(req->TotalNumber() == 4);
  CHECK(req->group_key == "ns/job");
  CHECK(req->spread);
  CHECK(req->use_types == std::vector<std::string>{"A100", "H100"});

  // Memory and cores are per GPU: out of the pod's request; the vGPU count stays.
  resource::ResourceList r = pod->EffectiveRequest();
  StripPerDeviceVgpuResources(r);
  CHECK(r.Get(kVgpuNumber).Value() == 3);
  CHECK_FALSE(r.Has(kVgpuMemory));
  CHECK_FALSE(r.Has(kVgpuCores));
  CHECK_FALSE(r.Has(kVgpuMemoryPercentage));

  auto plain = api::Pod::Parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  REQUIRE(plain.ok());
  CHECK(PodVgpuRequest(*plain) == nullptr);
}

TEST_CASE("vGPU cache: a pod's assignment annotation is read back", "[sched][cache][vgpu]") {
  auto pod = api::Pod::Parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",)"
      R"("annotations":{"volcano.sh/vgpu-ids-new":"GPU-1,NVIDIA,4000,30:GPU-2,NVIDIA,4000,30:"}},)"
      R"("spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"limits":)"
      R"({"volcano.sh/vgpu-number":"2","volcano.sh/vgpu-memory":"4000"}}}]}})");
  REQUIRE(pod.ok());
  VgpuAssignment a = PodVgpuAssignment(*pod);
  REQUIRE(a.size() == 1);
  REQUIRE(a[0].size() == 2);
  CHECK(a[0][1] == VgpuContainerDevice{"GPU-2", "NVIDIA", 4000, 30});
}

std::string NodeJson(std::string_view handshake) {
  std::string hs = handshake.empty() ? std::string()
                                     : std::string(R"(,"volcano.sh/node-vgpu-handshake":")") +
                                           std::string(handshake) + "\"";
  return std::string(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","annotations":{)"
                     R"("volcano.sh/node-vgpu-register":)"
                     R"("GPU-0,10,16000,NVIDIA-A100,true:GPU-1,10,16000,NVIDIA-A100,true:")") +
         hs + R"(}},"status":{"allocatable":{"cpu":"8","volcano.sh/vgpu-number":"20"}}})";
}

TEST_CASE("vGPU cache: a node's registration counts while the handshake is alive",
          "[sched][cache][vgpu]") {
  auto node = api::Node::Parse(NodeJson("Reported 2026-12-03 07:00:00"));
  REQUIRE(node.ok());
  api::CompactNode c = api::ToCompactNode(*node);
  NodeInfo n = ToNodeInfo(c);
  REQUIRE(n.vgpus().devices().size() == 2);
  CHECK(n.vgpus().devices()[1].uuid == "GPU-1");
  CHECK(n.vgpus().devices()[1].shares == 10);
  CHECK(n.allocatable().Get(kVgpuNumber) == 20000);

  for (std::string_view gone :
       {std::string_view("Deleted_2026.12.03 07:00:00"), std::string_view("")}) {
    auto dead = api::Node::Parse(NodeJson(gone));
    REQUIRE(dead.ok());
    CHECK(ToNodeInfo(api::ToCompactNode(*dead)).vgpus().empty());
  }
}

TEST_CASE("vGPU cache: the binder writes the assignment into the pod with the binding",
          "[sched][cache][vgpu]") {
  auto fake = std::make_unique<client::FakeTransport>();
  client::FakeTransport* transport = fake.get();
  client::Client client(std::move(fake));
  ClusterState state{{}};
  auto node = api::Node::Parse(NodeJson("Reported 2026-12-03 07:00:00"));
  REQUIRE(node.ok());
  state.UpsertNode(std::make_shared<api::CompactNode>(api::ToCompactNode(*node)));
  auto pod = std::make_shared<CachedPod>();
  pod->pod.namespace_name = "ns";
  pod->pod.name = "p0";
  pod->pod.uid = "uid-p0";
  pod->pod.scheduler_name = "volcano";
  pod->pod.request.Set(std::string(kVgpuNumber), resource::Quantity::FromInt(1));
  auto req = std::make_shared<VgpuRequest>();
  req->containers.push_back({1, 4000, kVgpuNoPercentage, 30});
  pod->vgpu = req;
  state.UpsertPod(pod);

  transport->AddJson("POST", "/api/v1/namespaces/ns/pods/p0/binding", 201,
                     R"({"kind":"Status","status":"Success"})");
  ApiBinder binder(&client, &state, nullptr, 1);
  BindRequest r{"uid-p0", "ns", "p0", "n1"};
  r.vgpu = {{{"GPU-1", "NVIDIA", 4000, 30}}};
  binder.Bind("", {r});
  // Assumed at once, on the GPU chosen (not another one the cache might pick).
  auto snap = state.TakeSnapshot();
  const NodeInfo& assumed = snap.cluster.nodes().at("n1");
  CHECK(assumed.vgpus().devices()[0].used_memory == 0);
  CHECK(assumed.vgpus().devices()[1].used_memory == 4000);
  CHECK(assumed.vgpus().devices()[1].used_cores == 30);
  binder.Shutdown();
  REQUIRE(transport->requests().size() == 1);
  const std::string body = transport->requests()[0].body;
  CHECK_THAT(body, Catch::Contains(R"("volcano.sh/vgpu-ids-new":"GPU-1,NVIDIA,4000,30:")"));
  CHECK_THAT(body, Catch::Contains(R"("volcano.sh/devices-to-allocate":"GPU-1,NVIDIA,4000,30:")"));
  CHECK_THAT(body, Catch::Contains(R"("volcano.sh/bind-phase":"allocating")"));
  CHECK_THAT(body, Catch::Contains(R"("volcano.sh/vgpu-node":"n1")"));
  CHECK_THAT(body, Catch::Contains(R"("kind":"Binding")"));
}

}  // namespace
}  // namespace basalt::sched::cache
