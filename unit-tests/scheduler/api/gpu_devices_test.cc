#include "scheduler/api/gpu_devices.h"

#include <catch2/catch.hpp>

#include "scheduler/api/node_info.h"
#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::MakeNode;
using testing::MakeTask;

NodeInfo GpuNode(int gpus, std::string model = "V100") {
  NodeInfo n = MakeNode("n1").Allocatable("cpu", "64").Allocatable("nvidia.com/gpu", gpus);
  n.set_gpus(GpuDevices(std::move(model), gpus));
  return n;
}

TaskInfo GpuTask(std::string name, int32_t count, int32_t milli, TaskStatus status) {
  TaskInfo t = MakeTask(std::move(name)).Request("cpu", "1").Node("n1").Status(status);
  t.gpu.count = count;
  t.gpu.milli = milli;
  t.resreq.Set(kGpu, int64_t{count} * milli);
  t.init_resreq = t.resreq;
  return t;
}

TEST_CASE("GpuDevices: a share fits only a GPU with that much free", "[sched][gpu]") {
  NodeInfo node = GpuNode(2);
  TaskInfo a = GpuTask("a", 1, 700, TaskStatus::kAllocated);
  TaskInfo b = GpuTask("b", 1, 500, TaskStatus::kAllocated);
  REQUIRE(node.AddTask(&a).ok());
  REQUIRE(node.AddTask(&b).ok());
  CHECK(a.gpu_ids == std::vector<int32_t>{0});
  CHECK(b.gpu_ids == std::vector<int32_t>{1});  // 300 left on GPU 0 is too little
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{300, 500});
  // 800 milli-GPU are free in total, but no single GPU has 600.
  TaskInfo c = GpuTask("c", 1, 600, TaskStatus::kAllocated);
  CHECK(node.idle().Get(kGpu) == 800);
  CHECK_FALSE(node.GpuFits(c));
  CHECK(node.AddTask(&c).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{300, 500});
}

TEST_CASE("GpuDevices: removing a task gives its GPU share back", "[sched][gpu]") {
  NodeInfo node = GpuNode(2);
  TaskInfo a = GpuTask("a", 1, 700, TaskStatus::kRunning);
  REQUIRE(node.AddTask(&a).ok());
  REQUIRE(node.RemoveTask(a).ok());
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{1000, 1000});
  CHECK(node.gpus().TotalFreeMilli() == 2000);
}

TEST_CASE("GpuDevices: multi-GPU tasks take whole free GPUs only", "[sched][gpu]") {
  NodeInfo node = GpuNode(4);
  TaskInfo share = GpuTask("s", 1, 300, TaskStatus::kRunning);
  REQUIRE(node.AddTask(&share).ok());
  TaskInfo four = GpuTask("four", 4, 1000, TaskStatus::kAllocated);
  CHECK_FALSE(node.GpuFits(four));
  TaskInfo three = GpuTask("three", 3, 1000, TaskStatus::kAllocated);
  REQUIRE(node.AddTask(&three).ok());
  CHECK(three.gpu_ids == std::vector<int32_t>{1, 2, 3});
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{700, 0, 0, 0});
}

TEST_CASE("GpuDevices: a share goes to the fullest GPU that still fits (best fit)",
          "[sched][gpu]") {
  NodeInfo node = GpuNode(3);
  TaskInfo a = GpuTask("a", 1, 600, TaskStatus::kRunning);
  REQUIRE(node.AddTask(&a).ok());  // GPU 0 -> 400 free
  TaskInfo b = GpuTask("b", 1, 300, TaskStatus::kAllocated);
  REQUIRE(node.AddTask(&b).ok());
  CHECK(b.gpu_ids == std::vector<int32_t>{0});
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{100, 1000, 1000});
}

TEST_CASE("GpuDevices: GPU models outside the request do not fit", "[sched][gpu]") {
  NodeInfo node = GpuNode(2, "T4");
  TaskInfo t = GpuTask("t", 1, 1000, TaskStatus::kAllocated);
  t.gpu.models = ParseGpuModels("V100M16|V100M32");
  CHECK(t.gpu.models == std::vector<std::string>{"V100M16", "V100M32"});
  CHECK_FALSE(node.GpuFits(t));
  t.gpu.models = ParseGpuModels("T4");
  CHECK(node.GpuFits(t));
}

TEST_CASE("GpuDevices: a pipelined task holds no device until it is allocated", "[sched][gpu]") {
  NodeInfo node = GpuNode(1);
  TaskInfo t = GpuTask("t", 1, 500, TaskStatus::kPipelined);
  REQUIRE(node.AddTask(&t).ok());
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{1000});
  t.status = TaskStatus::kAllocated;
  REQUIRE(node.UpdateTask(&t, TaskStatus::kPipelined).ok());
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{500});
  // Allocated -> Binding keeps the same device.
  t.status = TaskStatus::kBinding;
  REQUIRE(node.UpdateTask(&t, TaskStatus::kAllocated).ok());
  CHECK(t.gpu_ids == std::vector<int32_t>{0});
  CHECK(node.gpus().free_milli() == std::vector<int32_t>{500});
}

}  // namespace
}  // namespace basalt::sched
