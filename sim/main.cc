// basalt-sim: replays a workload through the real scheduler core in virtual time. See
// docs/sim.md.
//
//   basalt-sim --nodes openb_node_list_gpu_node.csv --tasks openb_pod_list_default.csv
//              --scheduler-conf conf.yaml [--seed 1] [--demand 1.3] [--scale 1]
//              [--period 10] [--csv out.csv] [--placements out.csv] [--quiet]
//              [--fgd-learned]
//   basalt-sim --workload workload.yaml --scheduler-conf conf.yaml [--csv out.csv]

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "common/util/flags.h"
#include "fmt/format.h"
#include "scheduler/actions/registry.h"
#include "scheduler/framework/framework.h"
#include "scheduler/plugins/fgd/fgd.h"
#include "scheduler/plugins/registry.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace {

constexpr char kUsage[] =
    "usage: basalt-sim (--nodes NODES.csv --tasks TASKS.csv | --workload W.yaml)\n"
    "                  --scheduler-conf CONF.yaml [--seed N] [--demand SHARE] [--scale K]\n"
    "                  [--period SECONDS] [--csv OUT.csv] [--placements OUT.csv] [--quiet]\n"
    "                  [--fgd-learned]\n"
    "  With --tasks, every fgd plugin without fgd.workloadFrom gets the task list as its target\n"
    "  workload (the FGD paper's protocol); --fgd-learned keeps fgd learning it from the tasks\n"
    "  seen so far.\n";

int Fail(const std::string& msg) {
  std::cerr << "basalt-sim: " << msg << "\n";
  return 2;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string nodes_path, tasks_path, workload_path, conf_path, csv_path, placements_path;
  uint64_t seed = 1;
  double demand = 1.3, period = 10;
  int scale = 1;
  bool quiet = false, fgd_learned = false;
  int64_t seed_flag = 1;
  basalt::FlagSet flags("basalt-sim");
  flags.String("nodes", &nodes_path, "OpenB node list (CSV)");
  flags.String("tasks", &tasks_path, "OpenB pod list (CSV)");
  flags.String("workload", &workload_path, "a workload (YAML), instead of --nodes/--tasks");
  flags.String("scheduler-conf", &conf_path, "scheduler configuration (Volcano's YAML)");
  flags.String("csv", &csv_path, "write the per-step series here (CSV)");
  flags.String("placements", &placements_path, "write each task's placement here (CSV)");
  flags.Int64("seed", &seed_flag, "random seed (>= 0)");
  flags.Double("demand", &demand, "tasks to submit, as a share of the cluster's GPUs");
  flags.Double("period", &period, "virtual seconds between arrivals");
  flags.Int("scale", &scale, "copies of the node list");
  flags.Bool("quiet", &quiet, "no progress on stderr");
  flags.Bool("fgd-learned", &fgd_learned, "fgd learns its target workload from the tasks seen");
  if (absl::Status s = flags.Parse(argc, argv); !s.ok()) {
    if (absl::IsCancelled(s)) {  // --help
      std::cout << kUsage << flags.FlagsUsage();
      return 0;
    }
    std::cerr << kUsage;
    return Fail(std::string(s.message()));
  }
  if (seed_flag < 0) return Fail("--seed must be >= 0");
  seed = static_cast<uint64_t>(seed_flag);
  if (conf_path.empty()) return Fail("--scheduler-conf is required");
  if (workload_path.empty() == (nodes_path.empty() || tasks_path.empty())) {
    return Fail("give either --workload or both --nodes and --tasks");
  }
  if (period <= 0) return Fail("--period must be > 0");
  if (demand <= 0) return Fail("--demand must be > 0");
  if (scale < 1) return Fail("--scale must be >= 1");

  std::string conf_yaml;
  if (!ReadFile(conf_path, &conf_yaml)) return Fail("cannot read " + conf_path);
  const auto plugins = basalt::sched::NewInTreeRegistry();
  const auto actions = basalt::sched::NewInTreeActionRegistry();
  auto config = basalt::sched::LoadSchedulerConfig(conf_yaml, plugins, actions);
  if (!config.ok())
    return Fail(fmt::format("{}: {}", conf_path, std::string(config.status().message())));

  basalt::sim::Workload workload;
  basalt::sim::SimOptions options;
  options.period = period;
  if (!workload_path.empty()) {
    std::string yaml;
    if (!ReadFile(workload_path, &yaml)) return Fail("cannot read " + workload_path);
    auto w = basalt::sim::ParseWorkloadYaml(yaml);
    if (!w.ok())
      return Fail(fmt::format("{}: {}", workload_path, std::string(w.status().message())));
    workload = *std::move(w);
    options.drop_unplaced = false;
  } else {
    auto nodes = basalt::sim::ReadOpenbNodes(nodes_path);
    if (!nodes.ok()) return Fail(std::string(nodes.status().message()));
    auto tasks = basalt::sim::ReadOpenbTasks(tasks_path);
    if (!tasks.ok()) return Fail(std::string(tasks.status().message()));
    std::vector<basalt::sim::SimNode> all;
    for (int k = 0; k < scale; ++k) {
      for (basalt::sim::SimNode n : *nodes) {
        if (scale > 1) n.name = fmt::format("{}-x{}", n.name, k);
        all.push_back(std::move(n));
      }
    }
    workload = basalt::sim::SampleOpenbWorkload(std::move(all), *tasks, demand, seed);
    // The FGD paper measures fragmentation against the target workload, the task-type
    // popularity of the trace known in advance: the whole pod list the tasks are drawn from.
    if (!fgd_learned) {
      for (basalt::sched::Tier& tier : config->tiers) {
        for (basalt::sched::PluginOption& p : tier.plugins) {
          if (p.name == basalt::sched::kFgdPluginName && !p.arguments.Has("fgd.workloadFrom")) {
            p.arguments.Set("fgd.workloadFrom", tasks_path);
          }
        }
      }
    }
  }
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) return Fail("cannot write " + csv_path);
    options.csv = &csv;
  }
  std::ofstream placements;
  if (!placements_path.empty()) {
    placements.open(placements_path);
    if (!placements) return Fail("cannot write " + placements_path);
    options.placements = &placements;
  }
  if (!quiet) options.progress = &std::cerr;
  auto summary = basalt::sim::RunSimulation(workload, *config, options);
  if (!summary.ok()) return Fail(std::string(summary.status().message()));
  std::cout << "basalt-sim: " << summary->OneLine() << "\n";
  return 0;
}
