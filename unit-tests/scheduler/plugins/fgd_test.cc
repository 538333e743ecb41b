#include "scheduler/plugins/fgd/fgd.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "fmt/format.h"
#include "scheduler/framework/session.h"
#include "scheduler/plugins/bestfit/bestfit.h"
#include "scheduler/plugins/deviceshare/deviceshare.h"
#include "scheduler/plugins/registry.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeNode;
using testing::MakeTask;

FgdTaskType Type(int64_t cpu, int32_t count, int32_t milli, double weight) {
  FgdTaskType t;
  t.milli_cpu = cpu;
  t.gpu.count = count;
  t.gpu.milli = milli;
  t.weight = weight;
  return t;
}

// A node with GPUs whose free shares are `free` (set by placing shares on them).
NodeInfo NodeWithFree(std::string name, const std::vector<int32_t>& free,
                      std::vector<TaskInfo>& holders) {
  const int n = static_cast<int>(free.size());
  NodeInfo node = MakeNode(name)
                      .Allocatable("cpu", "32")
                      .Allocatable("memory", "64Gi")
                      .Allocatable("nvidia.com/gpu", n);
  node.set_gpus(GpuDevices("V100", n));
  holders.reserve(16);
  for (int i = 0; i < n; ++i) {
    if (free[i] == 1000) continue;
    TaskInfo t = MakeTask(fmt::format("{}-h{}", name, i)).Node(name).Status(TaskStatus::kRunning);
    t.gpu.count = 1;
    t.gpu.milli = 1000 - free[i];
    t.gpu_ids = {i};
    t.gpu_node = name;
    t.resreq.Set(kGpu, t.gpu.milli);
    holders.push_back(t);
    REQUIRE(node.AddTask(&holders.back()).ok());
  }
  REQUIRE(node.gpus().free_milli() == free);
  return node;
}

TaskInfo Share(std::string name, int32_t milli) {
  TaskInfo t = MakeTask(std::move(name)).Request("cpu", "1");
  t.gpu.count = 1;
  t.gpu.milli = milli;
  t.resreq.Set(kGpu, milli);
  return t;
}

TEST_CASE("fgd: fragmentation of a node for one task type", "[sched][fgd]") {
  const std::vector<int32_t> free{1000, 300};
  // A half-GPU task can use GPU 0; GPU 1's 300 are a fragment.
  CHECK(GpuFragmentation(8000, 1 << 30, "V100", free, Type(1000, 1, 500, 1)) == 300);
  // Two whole GPUs: only one is whole, so the task cannot run here; everything is a fragment.
  CHECK(GpuFragmentation(8000, 1 << 30, "V100", free, Type(1000, 2, 1000, 1)) == 1300);
  // A task without GPUs cannot use any of them.
  CHECK(GpuFragmentation(8000, 1 << 30, "V100", free, Type(1000, 0, 0, 1)) == 1300);
  // Not enough CPU left: all of it.
  CHECK(GpuFragmentation(500, 1 << 30, "V100", free, Type(1000, 1, 500, 1)) == 1300);
  // GPU model not allowed: all of it.
  FgdTaskType t4 = Type(1000, 1, 500, 1);
  t4.gpu.models = {"T4"};
  CHECK(GpuFragmentation(8000, 1 << 30, "V100", free, t4) == 1300);
  // Expected over 50% half-GPU and 50% two-GPU tasks.
  CHECK(ExpectedGpuFragmentation(8000, 1 << 30, "V100", free,
                                 {Type(1000, 1, 500, 0.5), Type(1000, 2, 1000, 0.5)}) ==
        Approx(800));
}

TEST_CASE("fgd: a share goes where it fragments least, not where it fits tightest",
          "[sched][fgd]") {
  std::vector<TaskInfo> ha, hb;
  NodeInfo a = NodeWithFree("a", {1000, 1000}, ha);
  NodeInfo b = NodeWithFree("b", {700, 1000}, hb);
  const std::vector<FgdTaskType> types{Type(1000, 1, 600, 1)};  // the workload: 0.6-GPU tasks
  TaskInfo task = Share("t", 300);
  // On a: [700, 1000], both still fit 0.6: no fragment. On b: [400, 1000]: 400 is a fragment.
  CHECK(NodeExpectedFragmentation(a, types) == Approx(0));
  CHECK(FragmentationAfterPlacing(task, a, types) == Approx(0));
  CHECK(NodeExpectedFragmentation(b, types) == Approx(0));
  CHECK(FragmentationAfterPlacing(task, b, types) == Approx(400));
  // BestFit prefers b, the fuller node.
  CHECK(BestFitScore(task, b) > BestFitScore(task, a));
}

TEST_CASE("fgd: filling a fragment lowers the node's fragmentation", "[sched][fgd]") {
  std::vector<TaskInfo> h;
  NodeInfo node = NodeWithFree("n", {1000, 500}, h);
  const std::vector<FgdTaskType> types{Type(1000, 1, 1000, 1)};  // whole-GPU workload
  CHECK(NodeExpectedFragmentation(node, types) == Approx(500));
  CHECK(FragmentationAfterPlacing(Share("t", 500), node, types) == Approx(0));
}

TEST_CASE("fgd: task types are learned from the snapshot with their popularity", "[sched][fgd]") {
  ClusterInfo c;
  REQUIRE(c.AddJob(testing::MakeJob("ns", "j")).ok());
  for (int i = 0; i < 3; ++i) {
    TaskInfo t = Share(fmt::format("s{}", i), 500);
    t.job_id = "ns/j";
    REQUIRE(c.AddTask(t).ok());
  }
  TaskInfo cpu = MakeTask("c").Job("ns/j").Request("cpu", "2");
  REQUIRE(c.AddTask(cpu).ok());
  const std::vector<FgdTaskType> types = FgdTaskTypes(c);
  REQUIRE(types.size() == 2);
  CHECK(types[0].gpu.milli == 500);
  CHECK(types[0].weight == Approx(0.75));
  CHECK(types[1].gpu.Empty());
  CHECK(types[1].milli_cpu == 2000);
  CHECK(types[1].weight == Approx(0.25));
}

TEST_CASE("fgd: a node with only the nvidia.com/gpu scalar is seen as whole GPUs", "[sched][fgd]") {
  NodeInfo node = MakeNode("n")
                      .Allocatable("cpu", "32")
                      .Allocatable("memory", "64Gi")
                      .Allocatable("nvidia.com/gpu", 8);
  TaskInfo held =
      MakeTask("h").Node("n").Status(TaskStatus::kRunning).Request("nvidia.com/gpu", "3");
  REQUIRE(node.AddTask(&held).ok());
  const FgdGpuView view = GpuViewOf(node);
  CHECK(view.kind == FgdGpuView::Kind::kWholeScalar);
  CHECK(view.free == std::vector<int32_t>{1000, 1000, 1000, 1000, 1000, 0, 0, 0});
  // The 5 free GPUs serve a 4-GPU task (no fragment) but not a 6-GPU one (all of it).
  CHECK(GpuFragmentation(32000, 1 << 30, view, Type(1000, 4, 1000, 1)) == 0);
  CHECK(GpuFragmentation(32000, 1 << 30, view, Type(1000, 6, 1000, 1)) == 5000);
  // A scalar request is learned as whole GPUs; after placing 2 of them, 3 are left, too few.
  ClusterInfo c;
  REQUIRE(c.AddJob(testing::MakeJob("ns", "j")).ok());
  TaskInfo four = MakeTask("four").Job("ns/j").Request("cpu", "1").Request("nvidia.com/gpu", "4");
  REQUIRE(c.AddTask(four).ok());
  const std::vector<FgdTaskType> types = FgdTaskTypes(c);
  REQUIRE(types.size() == 1);
  CHECK(types[0].gpu.count == 4);
  CHECK(types[0].gpu.milli == 1000);
  TaskInfo two = MakeTask("two").Request("cpu", "1").Request("nvidia.com/gpu", "2");
  CHECK(FragmentationAfterPlacing(two, node, types) == Approx(3000));
}

TEST_CASE("fgd: vGPU devices are seen by their free memory and cores", "[sched][fgd]") {
  NodeInfo node = MakeNode("v").Allocatable("cpu", "32").Allocatable("memory", "64Gi");
  std::vector<VgpuDevice> devs(2);
  for (int i = 0; i < 2; ++i) {
    devs[i].uuid = fmt::format("GPU-{}", i);
    devs[i].shares = 4;
    devs[i].memory = 16000;
  }
  devs[0].used_shares = 1;
  devs[0].used_memory = 4000;  // 750 of 1000 left by memory
  devs[0].used_cores = 50;     // 500 left by cores: the smaller counts
  node.set_vgpus(VgpuDevices(devs));
  const FgdGpuView view = GpuViewOf(node);
  CHECK(view.kind == FgdGpuView::Kind::kVgpu);
  CHECK(view.free == std::vector<int32_t>{500, 1000});
  FgdTaskType small = Type(1000, 1, 0, 1);
  small.vgpu = true;
  small.vgpu_memory = 8000;  // 500 per mille of a 16000 MiB GPU
  small.vgpu_cores = 20;
  CHECK(GpuFragmentation(32000, 1 << 30, view, small) == 0);
  FgdTaskType big = small;
  big.vgpu_memory = 12000;  // 750: GPU 0 cannot take it
  CHECK(GpuFragmentation(32000, 1 << 30, view, big) == 500);
  FgdTaskType huge = small;
  huge.vgpu_memory = 20000;  // more than a GPU has
  CHECK(GpuFragmentation(32000, 1 << 30, view, huge) == 1500);
  // Whole-GPU types cannot use vGPU devices, nor vGPU types a node without them.
  CHECK(GpuFragmentation(32000, 1 << 30, view, Type(1000, 1, 1000, 1)) == 1500);
  CHECK(GpuFragmentation(32000, 1 << 30, "V100", {1000}, small) == 1000);
  // A GPU whose vGPU count is taken is no longer free.
  devs[1].used_shares = 4;
  node.set_vgpus(VgpuDevices(devs));
  CHECK(GpuViewOf(node).free == std::vector<int32_t>{500, 0});
}

TEST_CASE("fgd: the GPU choice hook takes the GPU of least fragmentation", "[sched][fgd]") {
  const std::vector<FgdTaskType> types{Type(1000, 1, 500, 1)};  // the workload: half GPUs
  GpuDevices gpus("V100", 3);
  gpus.Account({0}, 400, +1);  // free [600, 1000, 1000]
  GpuRequest share{1, 300, {}};
  // Best fit: GPU 0 (600 -> 300, a fragment of 300 for half-GPU tasks).
  CHECK(gpus.Choose(share) == std::vector<int32_t>{0});
  gpus.set_choice_cost(std::make_shared<const GpuChoiceCost>(
      [&types](const std::vector<int32_t>& free, const HostLeft& left) {
        return ExpectedGpuFragmentation(left.milli_cpu, left.memory, "V100", free, types);
      }));
  // With the cost: GPU 1 ([600, 700, 1000]: no fragment); GPUs 1 and 2 tie, the first wins.
  CHECK(gpus.Choose(share, HostLeft{8000, 1 << 30}) == std::vector<int32_t>{1});
  // Whole GPUs are not a choice: best fit as before.
  CHECK(gpus.Choose(GpuRequest{2, 1000, {}}) == std::vector<int32_t>{1, 2});

  // The same on vGPU devices (16000 MiB each): 4000 MiB used on GPU 0.
  std::vector<VgpuDevice> devs(2);
  for (int i = 0; i < 2; ++i) {
    devs[i].uuid = fmt::format("GPU-{}", i);
    devs[i].shares = 4;
    devs[i].memory = 16000;
  }
  devs[0].used_shares = 1;
  devs[0].used_memory = 6400;  // 600 per mille left
  VgpuDevices v(devs);
  VgpuRequest req;
  req.containers.push_back(VgpuContainerRequest{1, 4800, kVgpuNoPercentage, 0});  // 300
  // Binpack: the GPU with the least memory left, GPU 0.
  CHECK(v.Fit(req).assignment.at(0).at(0).uuid == "GPU-0");
  FgdTaskType half = Type(1000, 1, 0, 1);
  half.vgpu = true;
  half.vgpu_memory = 8000;
  const std::vector<FgdTaskType> vtypes{half};
  v.set_choice_cost(std::make_shared<const VgpuChoiceCost>(
      [&vtypes](const std::vector<VgpuDevice>& after, const HostLeft& left) {
        NodeInfo n = MakeNode("v").Allocatable("cpu", "32");
        n.set_vgpus(VgpuDevices(after));
        return ExpectedGpuFragmentation(left.milli_cpu, left.memory, GpuViewOf(n), vtypes);
      }));
  CHECK(v.Fit(req, HostLeft{8000, 1 << 30}).assignment.at(0).at(0).uuid == "GPU-1");
}

// A file of `text` under the temporary directory, removed with the object.
struct TempFile {
  explicit TempFile(std::string_view name, std::string_view text)
      : path((std::filesystem::temp_directory_path() /
              fmt::format("basalt-fgd-{}-{}", ::getpid(), name))
                 .string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

TEST_CASE("fgd: a workload CSV gives the task types and weights up front", "[sched][fgd]") {
  // Rows of one type add their weights; an empty request is not a type; no weight column would
  // mean 1 per row (an openb pod list).
  TempFile f("types.csv",
             "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,weight\n"
             "a,1000,1024,1,500,,3\n"
             "b,2000,0,0,0,,1\n"
             "c,1000,1024,1,500,,1\n"
             "d,0,0,0,0,,5\n"
             "e,4000,0,2,1000,V100M16|V100M32,3\n");
  auto types = ReadFgdWorkload(f.path);
  REQUIRE(types.ok());
  REQUIRE(types->size() == 3);  // total weight 8
  CHECK((*types)[0].gpu.milli == 500);
  CHECK((*types)[0].memory == int64_t{1024} << 20);
  CHECK((*types)[0].weight == Approx(0.5));
  CHECK((*types)[1].gpu.count == 2);
  CHECK((*types)[1].gpu.models == std::vector<std::string>{"V100M16", "V100M32"});
  CHECK((*types)[1].weight == Approx(0.375));
  CHECK((*types)[2].gpu.Empty());
  CHECK((*types)[2].milli_cpu == 2000);
  CHECK((*types)[2].weight == Approx(0.125));

  TempFile plain("plain.csv", "cpu_milli,memory_mib,num_gpu,gpu_milli\n1000,0,1,1000\n0,5,0,0\n");
  auto p = ReadFgdWorkload(plain.path);
  REQUIRE(p.ok());
  REQUIRE(p->size() == 2);
  CHECK((*p)[0].weight == Approx(0.5));

  TempFile bad("bad.csv", "cpu_milli,memory_mib,num_gpu,gpu_milli\n1000,0,1,1200\n");
  CHECK(ReadFgdWorkload(bad.path).status().code() == absl::StatusCode::kInvalidArgument);
  TempFile nohead("nohead.csv", "cpu_milli,num_gpu\n1,1\n");
  CHECK_FALSE(ReadFgdWorkload(nohead.path).ok());
  CHECK_FALSE(NewFgdPlugin(testing::Args({{"fgd.workloadFrom", "/nonexistent/w.csv"}})).ok());
}

TEST_CASE("fgd: fgd.workloadFrom replaces the learned distribution in the node score",
          "[sched][fgd]") {
  // n1: one GPU with a 400 share running (600 free); n2: one empty GPU. A 300 share is pending.
  // Learned from the snapshot: types 300 and 400 (one task each, weight 0.5).
  //   n1 [600] -> [300]: the 400 type cannot use 300: 0 -> 0.5 * 300 = +150; n2 [1000] -> [700]:
  //   both fit, +0. Scores 50 * (1 - delta / 1000): n1 42.5, n2 50 (n2 wins).
  // Target workload of whole GPUs: n1 600 -> 300, all a fragment: -300, score 65; n2 0 -> 700,
  //   +700, score 15 (n1 wins).
  TempFile whole("whole.csv", "cpu_milli,memory_mib,num_gpu,gpu_milli\n1000,0,1,1000\n");
  auto open = [](const std::string& arguments) {
    ClusterInfo c;
    REQUIRE(c.AddQueue(testing::MakeQueue("default")).ok());
    for (const char* name : {"n1", "n2"}) {
      NodeInfo node = MakeNode(name)
                          .Allocatable("cpu", "32")
                          .Allocatable("memory", "64Gi")
                          .Allocatable("nvidia.com/gpu", 1);
      node.set_gpus(GpuDevices("V100", 1));
      REQUIRE(c.AddNode(std::move(node)).ok());
    }
    TaskInfo holder = Share("h", 400);
    holder.resreq = Resource();
    holder.resreq.Set(kGpu, 400);
    holder.node_name = "n1";
    holder.status = TaskStatus::kRunning;
    holder.gpu_ids = {0};
    holder.gpu_node = "n1";
    REQUIRE(c.AddTask(holder).ok());
    REQUIRE(c.AddJob(testing::MakeJob("ns", "j")).ok());
    TaskInfo pending = Share("p", 300);
    pending.job_id = "ns/j";
    REQUIRE(c.AddTask(pending).ok());
    auto config = ParseSchedulerConfig(
        "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: fgd\n" + arguments);
    REQUIRE(config.ok());
    auto ssn = Session::Open(std::move(c), *config, NewInTreeRegistry(),
                             SessionOptions{"s", {}, nullptr, nullptr});
    REQUIRE(ssn.ok());
    REQUIRE((*ssn)->FindNode("n1")->gpus().free_milli() == std::vector<int32_t>{600});
    return *std::move(ssn);
  };
  const TaskInfo task = Share("p", 300);
  auto learned = open("");
  CHECK(learned->NodeOrder(task, *learned->FindNode("n1")) == Approx(42.5));
  CHECK(learned->NodeOrder(task, *learned->FindNode("n2")) == Approx(50));
  auto target = open("    arguments:\n      fgd.workloadFrom: \"" + whole.path + "\"\n");
  CHECK(target->NodeOrder(task, *target->FindNode("n1")) == Approx(65));
  CHECK(target->NodeOrder(task, *target->FindNode("n2")) == Approx(15));
}

TEST_CASE("fgd: the workload's CPU and memory per milli-GPU and the GPUs they strand",
          "[sched][fgd]") {
  // 40% whole-GPU tasks with 10 CPUs and 8 GiB, 40% half-GPU tasks with 2 CPUs and 4 GiB, 20%
  // CPU-only tasks (not counted: they ask for no GPU). Per milli-GPU: CPU (0.4 * 10000 + 0.4 *
  // 2000) / (0.4 * 1000 + 0.4 * 500) = 4800 / 600 = 8; memory (0.4 * 8 + 0.4 * 4) GiB / 600 =
  // 4.8 GiB / 600.
  FgdTaskType whole = Type(10000, 1, 1000, 0.4), half = Type(2000, 1, 500, 0.4),
              cpu_only = Type(4000, 0, 0, 0.2);
  whole.memory = int64_t{8} << 30;
  half.memory = int64_t{4} << 30;
  const FgdHostPerGpu per = HostPerGpuMilli({whole, half, cpu_only});
  CHECK(per.milli_cpu == Approx(8));
  CHECK(per.memory == Approx(4.8 * (1 << 30) / 600));
  CHECK(HostPerGpuMilli({cpu_only}).milli_cpu == 0);

  FgdGpuView two;
  two.kind = FgdGpuView::Kind::kDevices;
  two.free = {1000, 1000};
  const FgdHostPerGpu cpu8{8, 0};
  // 32 CPUs host 4000 milli-GPU of such tasks: both GPUs usable.
  CHECK(StrandedGpu(32000, 0, two, cpu8) == Approx(0));
  // 12 CPUs host 1500: 500 of the 2000 free are stranded.
  CHECK(StrandedGpu(12000, 0, two, cpu8) == Approx(500));
  // No CPU left: all of them.
  CHECK(StrandedGpu(0, 0, two, cpu8) == Approx(2000));
  // Memory binds first: 1 MiB per milli-GPU and 1000 MiB free host 1000 of the 2000.
  CHECK(StrandedGpu(32000, int64_t{1000} << 20, two, FgdHostPerGpu{8, 1 << 20}) == Approx(1000));
  // No ratio (no GPU type), or vGPU devices: nothing is counted.
  CHECK(StrandedGpu(0, 0, two, FgdHostPerGpu{}) == Approx(0));
  FgdGpuView vgpu = two;
  vgpu.kind = FgdGpuView::Kind::kVgpu;
  CHECK(StrandedGpu(0, 0, vgpu, cpu8) == Approx(0));
}

TEST_CASE("fgd: fgd.strandingWeight keeps CPU-only tasks off GPU nodes short of CPU",
          "[sched][fgd]") {
  // Target workload: whole-GPU tasks with 8 CPUs (8 milli-CPU per milli-GPU, no memory). Two
  // empty nodes with 2 GPUs each: "dense" with 16 CPUs, "rich" with 64. A CPU-only task asks for
  // 4 CPUs.
  //   The paper's measure: after the task, both nodes still fit a whole-GPU task on either GPU:
  //   no fragment, delta 0 on both, scores 50 and 50 (a tie).
  //   With fgd.strandingWeight 1: dense 16000 / 8 = 2000 usable -> 12000 / 8 = 1500, so 500
  //   stranded: delta +500, score 50 * (1 - 500 / 2000) = 37.5; rich 60000 / 8 = 7500 >= 2000,
  //   delta 0, score 50 (rich wins). Weight 2: dense 50 * (1 - 1000 / 2000) = 25.
  TempFile workload("stranding.csv", "cpu_milli,memory_mib,num_gpu,gpu_milli\n8000,0,1,1000\n");
  auto open = [&workload](const std::string& extra) {
    ClusterInfo c;
    REQUIRE(c.AddQueue(testing::MakeQueue("default")).ok());
    for (auto [name, cpus] : {std::pair{"dense", "16"}, std::pair{"rich", "64"}}) {
      NodeInfo node = MakeNode(name)
                          .Allocatable("cpu", cpus)
                          .Allocatable("memory", "256Gi")
                          .Allocatable("nvidia.com/gpu", 2);
      node.set_gpus(GpuDevices("V100", 2));
      REQUIRE(c.AddNode(std::move(node)).ok());
    }
    auto config = ParseSchedulerConfig(
        "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: fgd\n    arguments:\n"
        "      fgd.workloadFrom: \"" +
        workload.path + "\"\n" + extra);
    REQUIRE(config.ok());
    auto ssn = Session::Open(std::move(c), *config, NewInTreeRegistry(),
                             SessionOptions{"s", {}, nullptr, nullptr});
    REQUIRE(ssn.ok());
    return *std::move(ssn);
  };
  const TaskInfo task = MakeTask("cpu-only").Request("cpu", "4");
  auto paper = open("");
  CHECK(paper->NodeOrder(task, *paper->FindNode("dense")) == Approx(50));
  CHECK(paper->NodeOrder(task, *paper->FindNode("rich")) == Approx(50));
  auto one = open("      fgd.strandingWeight: 1\n");
  CHECK(one->NodeOrder(task, *one->FindNode("dense")) == Approx(37.5));
  CHECK(one->NodeOrder(task, *one->FindNode("rich")) == Approx(50));
  auto two = open("      fgd.strandingWeight: 2\n");
  CHECK(two->NodeOrder(task, *two->FindNode("dense")) == Approx(25));
  // A negative weight is refused.
  CHECK_FALSE(NewFgdPlugin(testing::Args({{"fgd.strandingWeight", "-1"}})).ok());
  CHECK(NewFgdPlugin(testing::Args({{"fgd.strandingWeight", "0.5"}})).ok());
}

TEST_CASE("deviceshare: the predicate names why the GPUs do not fit", "[sched][deviceshare]") {
  std::vector<TaskInfo> h;
  NodeInfo node = NodeWithFree("n", {400, 1000}, h);
  CHECK(CheckGpuDevices(Share("t", 1000), node).ok());
  TaskInfo two = Share("two", 1000);
  two.gpu.count = 2;
  Outcome o = CheckGpuDevices(two, node);
  CHECK(o.code() == Code::kUnschedulable);
  CHECK(o.Message() == "fewer than 2 GPUs with 1000m free");
  TaskInfo t4 = Share("t4", 100);
  t4.gpu.models = {"T4"};
  CHECK(CheckGpuDevices(t4, node).Message() == "GPU model V100 not requested");
  NodeInfo cpu_only = MakeNode("c").Allocatable("cpu", "8");
  CHECK(CheckGpuDevices(Share("t", 100), cpu_only).code() == Code::kUnschedulableAndUnresolvable);
  CHECK(CheckGpuDevices(MakeTask("plain").Request("cpu", "1"), cpu_only).ok());
}

TEST_CASE("bestfit: the score is the share of the node left unused, inverted", "[sched][bestfit]") {
  NodeInfo node = MakeNode("n").Allocatable("cpu", "4").Allocatable("memory", "8Gi");
  TaskInfo t = MakeTask("t").Request("cpu", "2").Request("memory", "2Gi");
  // Left: cpu 2/4, memory 6/8 -> mean 0.625 -> 37.5.
  CHECK(BestFitScore(t, node) == Approx(37.5));
}

}  // namespace
}  // namespace basalt::sched
