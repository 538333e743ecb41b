#include "sim/simulator.h"

#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/registry.h"
#include "sim/workload.h"

namespace basalt::sim {
namespace {

sched::SchedulerConfig Config(std::string_view scoring) {
  const std::string yaml = fmt::format(R"(actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
  - name: {}
)",
                                       scoring);
  auto c = sched::LoadSchedulerConfig(yaml, sched::NewInTreeRegistry(),
                                      sched::NewInTreeActionRegistry());
  REQUIRE(c.ok());
  return *c;
}

Workload Trace(uint64_t seed) {
  std::vector<SimNode> nodes;
  for (int i = 0; i < 6; ++i) {
    SimNode n;
    n.name = fmt::format("n{}", i);
    n.milli_cpu = 32000;
    n.memory = int64_t{64} << 30;
    n.gpus = i % 2 == 0 ? 2 : 8;
    n.model = i % 2 == 0 ? "T4" : "V100";
    nodes.push_back(std::move(n));
  }
  std::vector<SimTask> tasks;
  const int32_t shares[] = {1000, 500, 250, 750};
  for (int i = 0; i < 12; ++i) {
    SimTask t;
    t.name = fmt::format("t{}", i);
    t.milli_cpu = 2000 + 1000 * (i % 3);
    t.memory = int64_t{4} << 30;
    t.gpu.count = i % 5 == 4 ? 2 : 1;
    t.gpu.milli = t.gpu.count == 2 ? 1000 : shares[i % 4];
    if (i % 6 == 5) t.gpu.models = {"V100"};
    tasks.push_back(t);
  }
  return SampleOpenbWorkload(nodes, tasks, 1.3, seed);
}

std::string RunCsv(const Workload& w, std::string_view scoring, SimSummary* summary) {
  std::ostringstream csv;
  SimOptions o;
  o.csv = &csv;
  auto s = RunSimulation(w, Config(scoring), o);
  REQUIRE(s.ok());
  *summary = *s;
  return csv.str();
}

// Runs `w` with nothing dropped, writing the CSV and the placement list where asked.
SimSummary RunKeepingAll(const Workload& w, std::string_view scoring, std::ostream* csv,
                         std::ostream* placements) {
  SimOptions o;
  o.csv = csv;
  o.placements = placements;
  o.drop_unplaced = false;
  auto s = RunSimulation(w, Config(scoring), o);
  REQUIRE(s.ok());
  return *s;
}

TEST_CASE("basalt-sim: the same seed gives the same CSV", "[sim]") {
  SimSummary a, b, c;
  const std::string first = RunCsv(Trace(7), "fgd", &a);
  const std::string second = RunCsv(Trace(7), "fgd", &b);
  CHECK(first == second);
  CHECK(first.rfind("time_s,arrived_gpu_pct,gpu_alloc_pct", 0) == 0);
  CHECK(a.placed_tasks == b.placed_tasks);
  CHECK(a.gpu_alloc_at_mark == b.gpu_alloc_at_mark);
  // Another seed samples another task sequence.
  CHECK(RunCsv(Trace(8), "fgd", &c) != first);
}

TEST_CASE("basalt-sim: the trace protocol reads allocation at 100% arrival", "[sim]") {
  SimSummary s;
  RunCsv(Trace(3), "bestfit", &s);
  CHECK(s.gpu_capacity_milli == 30000);
  CHECK(s.gpu_alloc_at_mark > 0.5);
  CHECK(s.gpu_alloc_at_mark <= 1.0);
  CHECK(s.placed_tasks + s.dropped_tasks == s.tasks);
  CHECK(s.partial_gang_gpu_seconds == 0);
}

TEST_CASE("basalt-sim: YAML gangs are placed whole or not at all, and finish", "[sim]") {
  auto w = ParseWorkloadYaml(R"(
nodes:
- {name: gpu, count: 2, cpuMilli: 16000, memoryMiB: 65536, gpus: 4, model: A100}
queues:
- {name: research, weight: 2}
jobs:
- {name: big, queue: research, arrival: 0, duration: 100, replicas: 3, gpus: 4, cpuMilli: 1000}
- {name: share, arrival: 5, duration: 50, count: 4, every: 1, gpus: 1, gpuMilli: 500}
)");
  REQUIRE(w.ok());
  CHECK(w->jobs.size() == 5);
  std::ostringstream csv;
  const SimSummary s = RunKeepingAll(*w, "binpack", &csv, nullptr);
  // The 3x4-GPU gang never fits 2 nodes of 4 GPUs: it is never partly placed.
  CHECK(s.placed_tasks == 4);
  CHECK(s.partial_gang_gpu_seconds == 0);
  CHECK(csv.str().find("share_research") != std::string::npos);
}

TEST_CASE("basalt-sim: vGPU tasks get devices and the placement list names them", "[sim]") {
  auto w = ParseWorkloadYaml(R"(
nodes:
- {name: v, cpuMilli: 16000, memoryMiB: 65536, vgpus: 2, vgpuShares: 4, vgpuMemoryMiB: 16000}
jobs:
- {name: a, arrival: 0, vgpuNumber: 1, vgpuMemoryMiB: 10000, vgpuCores: 30, cpuMilli: 1000}
- {name: b, arrival: 10, vgpuNumber: 1, vgpuMemoryMiB: 10000, vgpuCores: 30, cpuMilli: 1000}
- {name: c, arrival: 20, vgpuNumber: 1, vgpuMemoryMiB: 10000, vgpuCores: 30, cpuMilli: 1000}
- {name: d, arrival: 30, vgpuNumber: 1, vgpuMemoryMiB: 6000, vgpuCores: 30, cpuMilli: 1000}
)");
  REQUIRE(w.ok());
  std::ostringstream placements;
  SimOptions o;
  o.placements = &placements;
  o.drop_unplaced = false;
  auto config =
      sched::LoadSchedulerConfig(R"(actions: "allocate"
tiers:
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
)",
                                 sched::NewInTreeRegistry(), sched::NewInTreeActionRegistry());
  REQUIRE(config.ok());
  auto s = RunSimulation(*w, *config, o);
  REQUIRE(s.ok());
  // Two GPUs of 16000 MiB: a and b take one each, c finds no GPU with 10000 MiB left, d fits
  // the 6000 left on the first GPU (binpack: the fullest GPU that still fits).
  CHECK(s->placed_tasks == 3);
  CHECK(placements.str() == "task,node,vgpus,gpus\na-task-0,v,0,\nb-task-0,v,1,\nd-task-0,v,0,\n");
  REQUIRE_FALSE(ParseWorkloadYaml("nodes:\n- {cpuMilli: 1, gpus: 1, vgpus: 1}\njobs: []\n").ok());
}

TEST_CASE("basalt-sim: with fgd a share takes the GPU that fragments least", "[sim]") {
  // GPU 0 keeps 600 after a; b (300) on GPU 0 would leave 300, too little for another a (400):
  // fgd puts b on GPU 1 ([600, 700]: both still take a or b), best fit on GPU 0.
  auto w = ParseWorkloadYaml(R"(
nodes:
- {name: n, cpuMilli: 16000, memoryMiB: 65536, gpus: 2, model: V100}
jobs:
- {name: a, arrival: 0, gpus: 1, gpuMilli: 400, cpuMilli: 1000}
- {name: b, arrival: 10, gpus: 1, gpuMilli: 300, cpuMilli: 1000}
)");
  REQUIRE(w.ok());
  auto run = [&](std::string_view scorer) {
    std::ostringstream placements;
    SimOptions o;
    o.placements = &placements;
    o.drop_unplaced = false;
    REQUIRE(RunSimulation(*w, Config(scorer), o).ok());
    return placements.str();
  };
  CHECK(run("fgd") == "task,node,vgpus,gpus\na-task-0,n,,0\nb-task-0,n,,1\n");
  CHECK(run("bestfit") == "task,node,vgpus,gpus\na-task-0,n,,0\nb-task-0,n,,0\n");
}

TEST_CASE("basalt-sim: fgd places gangs whole and keeps GPU models", "[sim]") {
  // Two A100 nodes and one V100 node of 4 GPUs. Gang g (2 x 4 A100 GPUs) takes both A100 nodes;
  // gang big (2 x 4 A100 GPUs) then fits nowhere (the V100 GPUs are free but not allowed) and
  // gets no task; a V100 share goes to the V100 node.
  auto w = ParseWorkloadYaml(R"(
nodes:
- {name: a100, count: 2, cpuMilli: 16000, memoryMiB: 65536, gpus: 4, model: A100}
- {name: v100, count: 1, cpuMilli: 16000, memoryMiB: 65536, gpus: 4, model: V100}
jobs:
- {name: g, arrival: 0, replicas: 2, minAvailable: 2, gpus: 4, gpuSpec: "A100", cpuMilli: 1000}
- {name: big, arrival: 10, replicas: 2, minAvailable: 2, gpus: 4, gpuSpec: "A100", cpuMilli: 1000}
- {name: share, arrival: 20, gpus: 1, gpuMilli: 500, gpuSpec: "V100", cpuMilli: 1000}
)");
  REQUIRE(w.ok());
  std::ostringstream placements;
  const SimSummary s = RunKeepingAll(*w, "fgd", nullptr, &placements);
  CHECK(s.placed_tasks == 3);
  CHECK(s.partial_gang_gpu_seconds == 0);
  std::map<std::string, std::string> node_of;  // task -> node
  std::istringstream in(placements.str());
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t comma = line.find(',');
    node_of[line.substr(0, comma)] = line.substr(comma + 1, line.find(',', comma + 1) - comma - 1);
  }
  REQUIRE(node_of.size() == 3);
  CHECK(node_of.at("g-task-0").starts_with("a100-"));
  CHECK(node_of.at("g-task-1").starts_with("a100-"));
  CHECK(node_of.at("g-task-0") != node_of.at("g-task-1"));
  CHECK(node_of.count("big-task-0") == 0);
  CHECK(node_of.at("share-task-0") == "v100");
}

TEST_CASE("basalt-sim: bad YAML names the field", "[sim]") {
  auto w = ParseWorkloadYaml(R"(
nodes:
- {name: n, cpuMilli: 1000}
jobs:
- {name: j, replicas: 2, minAvailable: 3}
)");
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().message() == "jobs[0].minAvailable must be within 1..replicas");
  auto q = ParseWorkloadYaml("nodes:\n- {cpuMilli: 1}\njobs:\n- {queue: nope}\n");
  REQUIRE_FALSE(q.ok());
  CHECK(q.status().message() == "jobs[0].queue: queue \"nope\" is not in queues");
}

}  // namespace
}  // namespace basalt::sim
