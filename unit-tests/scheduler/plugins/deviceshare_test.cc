// deviceshare's vGPU mode observed through whole scheduling cycles (allocate with the in-tree
// plugins): which GPUs the binds carry, and what a pending pod is told.
#include "scheduler/plugins/deviceshare/deviceshare.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "scheduler/conf/config.h"
#include "unit-tests/scheduler/testing/cycle.h"
#include "unit-tests/scheduler/testing/fakes.h"

namespace basalt::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::MakeQueue;
using testing::MakeTask;

constexpr char kVgpuConf[] = R"(
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
  - name: nodeorder
)";

SchedulerConfig Conf(std::string_view yaml) {
  auto c = ParseSchedulerConfig(yaml);
  REQUIRE(c.ok());
  return *c;
}

// `gpus` GPUs of 16000 MiB hosting 4 vGPUs each.
NodeInfo VgpuNode(const std::string& name, int gpus) {
  NodeInfo n = MakeNode(name).Allocatable("cpu", "32").Allocatable(kVgpuNumber, gpus * 4);
  std::vector<VgpuDevice> devs;
  for (int i = 0; i < gpus; ++i) {
    VgpuDevice d;
    d.uuid = name + "-GPU-" + std::to_string(i);
    d.shares = 4;
    d.memory = 16000;
    d.type = "NVIDIA-A100";
    devs.push_back(d);
  }
  n.set_vgpus(VgpuDevices(std::move(devs)));
  return n;
}

TaskInfo VgpuPod(const std::string& job, int i, int64_t memory, int32_t cores,
                 bool spread = false) {
  TaskInfo t = MakeTask(job + "-" + std::to_string(i)).Job("ns/" + job).Request("cpu", "1");
  auto req = std::make_shared<VgpuRequest>();
  req->containers.push_back({1, memory, kVgpuNoPercentage, cores});
  req->group_key = "ns/" + job;
  req->spread = spread;
  t.resreq.SetUnits(kVgpuNumber, 1);
  t.init_resreq = t.resreq;
  t.vgpu = std::move(req);
  return t;
}

struct Cycle : testing::OneCycle {
  void Run(ClusterInfo c, const SchedulerConfig& config) {
    REQUIRE(OneCycle::Run(std::move(c), config).ok());
  }
  std::map<std::string, VgpuAssignment> Assigned() const {
    std::map<std::string, VgpuAssignment> out;
    for (const auto& call : binder.calls) {
      for (const BindRequest& r : call.requests) out[r.pod_name] = r.vgpu;
    }
    return out;
  }
  std::string PendingMessage(const std::string& pod) const {
    std::string m;
    for (const auto& u : sink.pods) {
      if (u.pod_name == pod) m = u.condition.message;
    }
    return m;
  }
};

TEST_CASE("deviceshare vGPU: a burst never puts more on a GPU than its memory, cores and count",
          "[sched][deviceshare][vgpu]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(VgpuNode("n1", 2));
  (void)c.AddNode(VgpuNode("n2", 2));
  // 20 single-pod jobs of 5000 MiB and 30 cores: 3 fit per GPU by memory and cores.
  for (int j = 0; j < 20; ++j) {
    const std::string name = "b" + std::to_string(j);
    (void)c.AddJob(MakeJob("ns", name).MinAvailable(1));
    (void)c.AddTask(VgpuPod(name, 0, 5000, 30));
  }
  Cycle cycle;
  cycle.Run(std::move(c), Conf(kVgpuConf));
  std::map<std::string, VgpuAssignment> got = cycle.Assigned();
  CHECK(got.size() == 12);
  std::map<std::string, std::pair<int64_t, int32_t>> per_gpu;
  for (const auto& [pod, a] : got) {
    REQUIRE(a.size() == 1);
    REQUIRE(a[0].size() == 1);
    per_gpu[a[0][0].uuid].first += a[0][0].memory;
    per_gpu[a[0][0].uuid].second += a[0][0].cores;
  }
  CHECK(per_gpu.size() == 4);
  for (const auto& [uuid, used] : per_gpu) {
    CHECK(used.first <= 16000);
    CHECK(used.second <= 100);
  }
  // The rest are told which resource is short.
  int told = 0;
  for (int j = 0; j < 20; ++j) {
    const std::string pod = "b" + std::to_string(j) + "-0";
    if (got.count(pod) != 0) continue;
    CHECK_THAT(cycle.PendingMessage(pod), Catch::Contains("volcano.sh/vgpu-"));
    ++told;
  }
  CHECK(told == 8);
}

TEST_CASE("deviceshare vGPU: the spread policy puts a PodGroup's pods on different GPUs",
          "[sched][deviceshare][vgpu]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(VgpuNode("n1", 4));
  (void)c.AddJob(MakeJob("ns", "spread").MinAvailable(4));
  for (int i = 0; i < 4; ++i) (void)c.AddTask(VgpuPod("spread", i, 2000, 10, /*spread=*/true));
  (void)c.AddJob(MakeJob("ns", "pack").MinAvailable(3));
  for (int i = 0; i < 3; ++i) (void)c.AddTask(VgpuPod("pack", i, 1000, 10));
  Cycle cycle;
  cycle.Run(std::move(c), Conf(kVgpuConf));
  std::map<std::string, VgpuAssignment> got = cycle.Assigned();
  REQUIRE(got.size() == 7);
  std::set<std::string> spread_gpus;
  std::set<std::string> pack_gpus;
  for (const auto& [pod, a] : got) {
    (pod.rfind("spread", 0) == 0 ? spread_gpus : pack_gpus).insert(a[0][0].uuid);
  }
  CHECK(spread_gpus.size() == 4);
  CHECK(pack_gpus.size() == 1);  // binpack order without the policy
}

TEST_CASE("deviceshare vGPU: a pod that can never fit is told the resource",
          "[sched][deviceshare][vgpu]") {
  ClusterInfo c;
  (void)c.AddQueue(MakeQueue("default"));
  (void)c.AddNode(VgpuNode("n1", 2));
  (void)c.AddJob(MakeJob("ns", "huge").MinAvailable(1));
  (void)c.AddTask(VgpuPod("huge", 0, 40000, 10));
  Cycle cycle;
  cycle.Run(std::move(c), Conf(kVgpuConf));
  CHECK(cycle.binder.calls.empty());
  CHECK_THAT(cycle.PendingMessage("huge-0"),
             Catch::Contains("Insufficient volcano.sh/vgpu-memory"));

  // Without deviceshare.VGPUEnable the pod is told so, not bound without devices.
  ClusterInfo off;
  (void)off.AddQueue(MakeQueue("default"));
  (void)off.AddNode(VgpuNode("n1", 2));
  (void)off.AddJob(MakeJob("ns", "small").MinAvailable(1));
  (void)off.AddTask(VgpuPod("small", 0, 1000, 10));
  std::string conf = kVgpuConf;
  conf.replace(conf.find("true"), 4, "false");
  Cycle no_vgpu;
  no_vgpu.Run(std::move(off), Conf(conf));
  CHECK(no_vgpu.binder.calls.empty());
  CHECK_THAT(no_vgpu.PendingMessage("small-0"), Catch::Contains("deviceshare.VGPUEnable"));
}

TEST_CASE("deviceshare: arguments it cannot honour are refused", "[sched][deviceshare]") {
  using Map = std::map<std::string, std::string, std::less<>>;
  CHECK(NewDeviceSharePlugin(Arguments(Map{{"deviceshare.GPUSharingEnable", "true"}}))
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(NewDeviceSharePlugin(Arguments(Map{{"deviceshare.SchedulePolicy", "random"}}))
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(NewDeviceSharePlugin(Arguments(Map{{"deviceshare.VGPUEnable", "true"},
                                           {"deviceshare.SchedulePolicy", "spread"},
                                           {"deviceshare.ScheduleWeight", "10"}}))
            .ok());
}

}  // namespace
}  // namespace basalt::sched
