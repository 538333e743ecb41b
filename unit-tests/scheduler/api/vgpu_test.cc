#include "scheduler/api/vgpu.h"

#include <catch2/catch.hpp>
#include <set>

#include "scheduler/api/node_info.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeNode;
using testing::MakeTask;

// A node with `gpus` GPUs of 16000 MiB hosting up to `shares` vGPUs each.
NodeInfo VgpuNode(int gpus, int32_t shares = 4, int64_t memory = 16000) {
  NodeInfo n = MakeNode("n1").Allocatable("cpu", "64").Allocatable(kVgpuNumber, gpus * shares);
  std::vector<VgpuDevice> devs;
  for (int i = 0; i < gpus; ++i) {
    VgpuDevice d;
    d.uuid = "GPU-" + std::to_string(i);
    d.shares = shares;
    d.memory = memory;
    d.type = "NVIDIA-A100";
    devs.push_back(d);
  }
  n.set_vgpus(VgpuDevices(std::move(devs)));
  return n;
}

VgpuRequest Req(std::vector<VgpuContainerRequest> containers, std::string group = "",
                bool spread = false) {
  VgpuRequest r;
  r.containers = std::move(containers);
  r.group_key = std::move(group);
  r.spread = spread;
  return r;
}

TaskInfo VgpuTask(std::string name, VgpuRequest req, TaskStatus status = TaskStatus::kAllocated) {
  TaskInfo t = MakeTask(std::move(name)).Request("cpu", "1").Node("n1").Status(status);
  t.resreq.SetUnits(kVgpuNumber, req.TotalNumber());
  t.init_resreq = t.resreq;
  t.vgpu = std::make_shared<const VgpuRequest>(std::move(req));
  return t;
}

std::vector<int64_t> UsedMemory(const NodeInfo& n) {
  std::vector<int64_t> out;
  for (const VgpuDevice& d : n.vgpus().devices()) out.push_back(d.used_memory);
  return out;
}

TEST_CASE("vGPU codec: the device plugin's registration parses, with and without a mode",
          "[sched][vgpu]") {
  auto devs = ParseVgpuRegister(
      "GPU-d8794152-5506-fe60-be38-c6ff3d35dbf4,10,12288,NVIDIA-NVIDIA TITAN Xp,false:"
      "GPU-2,10,24576,NVIDIA-NVIDIA A10,true,hami-core:");
  REQUIRE(devs.ok());
  REQUIRE(devs->size() == 2);
  CHECK((*devs)[0].uuid == "GPU-d8794152-5506-fe60-be38-c6ff3d35dbf4");
  CHECK((*devs)[0].shares == 10);
  CHECK((*devs)[0].memory == 12288);
  CHECK((*devs)[0].type == "NVIDIA-NVIDIA TITAN Xp");
  CHECK_FALSE((*devs)[0].healthy);
  CHECK((*devs)[0].mode == "hami-core");
  CHECK((*devs)[1].healthy);
  CHECK((*devs)[1].memory == 24576);
  // What Basalt writes for fakes reads back the same.
  auto again = ParseVgpuRegister(EncodeVgpuRegister(*devs));
  REQUIRE(again.ok());
  CHECK((*again)[1].type == "NVIDIA-NVIDIA A10");
  CHECK((*again)[0].shares == 10);

  auto bad = ParseVgpuRegister("GPU-1,ten,12288,NVIDIA,true:");
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("volcano.sh/node-vgpu-register") && Catch::Contains("GPU-1,ten"));
  CHECK(ParseVgpuRegister("").ok());
}

TEST_CASE("vGPU codec: the pod assignment round-trips in Volcano's text form", "[sched][vgpu]") {
  VgpuAssignment a = {{{"GPU-a", "NVIDIA", 4000, 25}, {"GPU-b", "NVIDIA", 4000, 25}},
                      {{"GPU-c", "NVIDIA", 1000, 0}}};
  const std::string text = EncodeVgpuAssignment(a);
  CHECK(text == "GPU-a,NVIDIA,4000,25:GPU-b,NVIDIA,4000,25:;GPU-c,NVIDIA,1000,0:");
  auto back = DecodeVgpuAssignment(text);
  REQUIRE(back.ok());
  CHECK(*back == a);
  auto empty = DecodeVgpuAssignment("");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  CHECK(DecodeVgpuAssignment("GPU-a,NVIDIA,lots,25:").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("vGPU accounting: memory, cores and the vGPU count of each GPU bound what fits",
          "[sched][vgpu]") {
  NodeInfo node = VgpuNode(2, /*shares=*/3);
  // Binpack order: the GPU with the least memory left that still fits.
  TaskInfo a = VgpuTask("a", Req({{1, 10000, kVgpuNoPercentage, 30}}));
  TaskInfo b = VgpuTask("b", Req({{1, 5000, kVgpuNoPercentage, 30}}));
  REQUIRE(node.AddTask(&a).ok());
  REQUIRE(node.AddTask(&b).ok());
  CHECK(a.vgpu_node == "n1");
  REQUIRE(a.vgpu_assignment.size() == 1);
  CHECK(a.vgpu_assignment[0] == std::vector<VgpuContainerDevice>{{"GPU-0", "NVIDIA", 10000, 30}});
  CHECK(b.vgpu_assignment[0][0].uuid == "GPU-0");  // 6000 left there: the tighter fit
  CHECK(UsedMemory(node) == std::vector<int64_t>{15000, 0});

  // 7000 MiB: only GPU-1 has it.
  TaskInfo c = VgpuTask("c", Req({{1, 7000, kVgpuNoPercentage, 0}}));
  REQUIRE(node.AddTask(&c).ok());
  CHECK(c.vgpu_assignment[0][0].uuid == "GPU-1");

  // Cores: GPU-0 has 40 left, GPU-1 100 - 0.
  VgpuFit cores = node.vgpus().Fit(Req({{2, 100, kVgpuNoPercentage, 50}}));
  CHECK_FALSE(cores.ok);
  CHECK(cores.reason == "Insufficient volcano.sh/vgpu-cores");
  CHECK(cores.resolvable);

  // The vGPU count: GPU-0 hosts 2 of 3, a third fits, a fourth does not.
  TaskInfo d = VgpuTask("d", Req({{1, 100, kVgpuNoPercentage, 0}}));
  REQUIRE(node.AddTask(&d).ok());
  CHECK(d.vgpu_assignment[0][0].uuid == "GPU-0");
  CHECK(node.vgpus().devices()[0].used_shares == 3);
  TaskInfo e = VgpuTask("e", Req({{2, 100, kVgpuNoPercentage, 0}}));
  CHECK_FALSE(node.VgpuFits(e));
  CHECK(node.AddTask(&e).code() == absl::StatusCode::kFailedPrecondition);
  VgpuFit why = node.vgpus().Fit(*e.vgpu);
  CHECK(why.reason == "Insufficient volcano.sh/vgpu-number");

  // Removing a task gives all three dimensions back.
  REQUIRE(node.RemoveTask(a).ok());
  CHECK(UsedMemory(node) == std::vector<int64_t>{5100, 7000});
  CHECK(node.vgpus().devices()[0].used_shares == 2);
  CHECK(node.vgpus().devices()[0].used_cores == 30);
  REQUIRE(node.AddTask(&e).ok());
  CHECK(e.vgpu_assignment[0].size() == 2);
}

TEST_CASE("vGPU accounting: percentage, whole-GPU and exclusive requests", "[sched][vgpu]") {
  NodeInfo node = VgpuNode(2);
  // Neither memory nor percentage: the whole GPU's memory.
  TaskInfo whole = VgpuTask("whole", Req({{1, 0, kVgpuNoPercentage, 0}}));
  REQUIRE(node.AddTask(&whole).ok());
  CHECK(whole.vgpu_assignment[0][0].memory == 16000);
  // 25% of 16000 MiB.
  TaskInfo quarter = VgpuTask("quarter", Req({{1, 0, 25, 10}}));
  REQUIRE(node.AddTask(&quarter).ok());
  CHECK(quarter.vgpu_assignment[0][0].memory == 4000);
  CHECK(quarter.vgpu_assignment[0][0].uuid == "GPU-1");
  // 100 cores asks for a GPU alone: none is idle now.
  VgpuFit alone = node.vgpus().Fit(Req({{1, 1000, kVgpuNoPercentage, 100}}));
  CHECK_FALSE(alone.ok);
  CHECK(alone.reason == "Insufficient volcano.sh/vgpu-cores");
  CHECK(alone.resolvable);
  // More memory than any GPU has: waiting cannot help.
  VgpuFit huge = node.vgpus().Fit(Req({{1, 20000, kVgpuNoPercentage, 0}}));
  CHECK_FALSE(huge.ok);
  CHECK(huge.reason == "Insufficient volcano.sh/vgpu-memory");
  CHECK_FALSE(huge.resolvable);
  // More GPUs than the node has.
  VgpuFit many = node.vgpus().Fit(Req({{3, 100, kVgpuNoPercentage, 0}}));
  CHECK_FALSE(many.resolvable);
  CHECK_THAT(many.reason, Catch::Contains("volcano.sh/vgpu-number"));
}

TEST_CASE("vGPU accounting: a multi-container pod never puts two containers over a GPU's room",
          "[sched][vgpu]") {
  NodeInfo node = VgpuNode(2);
  // Two containers of 10000 MiB: one per GPU, since neither GPU holds both.
  TaskInfo t =
      VgpuTask("t", Req({{1, 10000, kVgpuNoPercentage, 0}, {1, 10000, kVgpuNoPercentage, 0}}));
  REQUIRE(node.AddTask(&t).ok());
  REQUIRE(t.vgpu_assignment.size() == 2);
  CHECK(t.vgpu_assignment[0][0].uuid != t.vgpu_assignment[1][0].uuid);
  CHECK(UsedMemory(node) == std::vector<int64_t>{10000, 10000});
  // A pod read back running with its assignment keeps exactly those GPUs.
  NodeInfo other = VgpuNode(2);
  TaskInfo running = VgpuTask("r", Req({{1, 3000, kVgpuNoPercentage, 0}}), TaskStatus::kRunning);
  running.vgpu_assignment = {{{"GPU-1", "NVIDIA", 3000, 0}}};
  running.vgpu_node = "n1";
  REQUIRE(other.AddTask(&running).ok());
  CHECK(UsedMemory(other) == std::vector<int64_t>{0, 3000});
  // A running pod with no assignment (bound by someone else) holds no GPU, as in Volcano.
  TaskInfo bare = VgpuTask("bare", Req({{1, 3000, kVgpuNoPercentage, 0}}), TaskStatus::kRunning);
  REQUIRE(other.AddTask(&bare).ok());
  CHECK(UsedMemory(other) == std::vector<int64_t>{0, 3000});
  CHECK(bare.vgpu_assignment.empty());
}

TEST_CASE("vGPU spread: pods of one PodGroup with the spread policy take different GPUs",
          "[sched][vgpu]") {
  NodeInfo node = VgpuNode(3);
  std::vector<TaskInfo> tasks;
  tasks.reserve(4);
  for (int i = 0; i < 3; ++i) {
    tasks.push_back(VgpuTask("w" + std::to_string(i),
                             Req({{1, 1000, kVgpuNoPercentage, 10}}, "ns/job", /*spread=*/true)));
    REQUIRE(node.AddTask(&tasks.back()).ok());
  }
  std::set<std::string> used;
  for (const TaskInfo& t : tasks) used.insert(t.vgpu_assignment[0][0].uuid);
  CHECK(used.size() == 3);
  // A fourth of the same group finds no GPU without a sibling; another group's pod fits.
  TaskInfo fourth = VgpuTask("w3", Req({{1, 1000, kVgpuNoPercentage, 10}}, "ns/job", true));
  VgpuFit f = node.vgpus().Fit(*fourth.vgpu);
  CHECK_FALSE(f.ok);
  CHECK_THAT(f.reason, Catch::Contains("volcano.sh/vgpu-podgroup-policy"));
  CHECK(f.resolvable);
  CHECK(node.vgpus().Fit(Req({{1, 1000, kVgpuNoPercentage, 10}}, "ns/other", true)).ok);
  // Without the policy, the same group packs onto one GPU.
  NodeInfo packed = VgpuNode(3);
  std::vector<TaskInfo> p;
  p.reserve(3);
  for (int i = 0; i < 3; ++i) {
    p.push_back(
        VgpuTask("p" + std::to_string(i), Req({{1, 1000, kVgpuNoPercentage, 10}}, "ns/job")));
    REQUIRE(packed.AddTask(&p.back()).ok());
  }
  CHECK(UsedMemory(packed) == std::vector<int64_t>{3000, 0, 0});
  // Removing a spread pod frees its GPU for its group again.
  REQUIRE(node.RemoveTask(tasks[1]).ok());
  CHECK(node.vgpus().Fit(*fourth.vgpu).ok);
}

TEST_CASE("vGPU policy: spread takes the GPU hosting the fewest vGPUs", "[sched][vgpu]") {
  NodeInfo node = VgpuNode(2);
  node.vgpus().set_policy(VgpuPolicy::kSpread);
  TaskInfo a = VgpuTask("a", Req({{1, 1000, kVgpuNoPercentage, 0}}));
  TaskInfo b = VgpuTask("b", Req({{1, 1000, kVgpuNoPercentage, 0}}));
  REQUIRE(node.AddTask(&a).ok());
  REQUIRE(node.AddTask(&b).ok());
  CHECK(UsedMemory(node) == std::vector<int64_t>{1000, 1000});
  // Scores: spread counts idle GPUs taken; binpack the memory share after placement.
  NodeInfo fresh = VgpuNode(2);
  fresh.vgpus().set_policy(VgpuPolicy::kSpread);
  CHECK(fresh.vgpus().Fit(Req({{2, 4000, kVgpuNoPercentage, 0}})).score == 200);
  fresh.vgpus().set_policy(VgpuPolicy::kBinpack);
  CHECK(fresh.vgpus().Fit(Req({{1, 4000, kVgpuNoPercentage, 0}})).score == 25);
}

TEST_CASE("vGPU type filters and unhealthy GPUs", "[sched][vgpu]") {
  NodeInfo node = VgpuNode(1);
  VgpuRequest want_a10 = Req({{1, 100, kVgpuNoPercentage, 0}});
  want_a10.use_types = {"a10"};
  CHECK(node.vgpus().Fit(want_a10).ok);  // "NVIDIA-A100" contains "A10", case-insensitively
  want_a10.use_types = {"V100"};
  VgpuFit f = node.vgpus().Fit(want_a10);
  CHECK_FALSE(f.ok);
  CHECK_FALSE(f.resolvable);
  VgpuRequest no_a100 = Req({{1, 100, kVgpuNoPercentage, 0}});
  no_a100.nouse_types = {"A100"};
  CHECK_FALSE(node.vgpus().Fit(no_a100).ok);
  auto sick = ParseVgpuRegister("GPU-x,4,16000,NVIDIA-A100,false:");
  REQUIRE(sick.ok());
  VgpuFit s = VgpuDevices(*sick).Fit(Req({{1, 100, kVgpuNoPercentage, 0}}));
  CHECK_FALSE(s.ok);
  CHECK(s.reason == "GPU unhealthy");
}

}  // namespace
}  // namespace basalt::sched
