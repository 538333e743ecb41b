#include "sim/workload.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace basalt::sim {

namespace {

constexpr int64_t kMiB = 1024 * 1024;

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

absl::StatusOr<int64_t> ToInt(const std::string& s, std::string_view what, int line) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used != s.size()) throw std::invalid_argument(s);
    return static_cast<int64_t>(v);
  } catch (const std::exception&) {
    return absl::InvalidArgumentError(
        fmt::format("line {}: {} must be an integer, got \"{}\"", line, what, s));
  }
}

// Reads a CSV with a header; calls `row(columns by header name, line number)`.
template <typename Row>
absl::Status ReadCsv(const std::string& path, Row row) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("cannot open {}", path));
  std::string line;
  if (!std::getline(in, line)) return absl::InvalidArgumentError(path + ": empty file");
  const std::vector<std::string> header = SplitCsvLine(line);
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    std::vector<std::string> cols = SplitCsvLine(line);
    cols.resize(header.size());
    auto col = [&](std::string_view name) -> const std::string& {
      static const std::string kEmpty;
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] == name) return cols[i];
      }
      return kEmpty;
    };
    absl::Status s = row(col, n);
    if (!s.ok())
      return absl::InvalidArgumentError(fmt::format("{}: {}", path, std::string(s.message())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<SimNode>> ReadOpenbNodes(const std::string& path) {
  std::vector<SimNode> out;
  absl::Status s = ReadCsv(path, [&out](auto col, int line) -> absl::Status {
    SimNode n;
    n.name = col("sn");
    auto cpu = ToInt(col("cpu_milli"), "cpu_milli", line);
    auto mem = ToInt(col("memory_mib"), "memory_mib", line);
    auto gpu = ToInt(col("gpu"), "gpu", line);
    if (!cpu.ok()) return cpu.status();
    if (!mem.ok()) return mem.status();
    if (!gpu.ok()) return gpu.status();
    n.milli_cpu = *cpu;
    n.memory = *mem * kMiB;
    n.gpus = static_cast<int32_t>(*gpu);
    n.model = col("model");
    out.push_back(std::move(n));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<SimTask>> ReadOpenbTasks(const std::string& path) {
  std::vector<SimTask> out;
  absl::Status s = ReadCsv(path, [&out](auto col, int line) -> absl::Status {
    SimTask t;
    t.name = col("name");
    auto cpu = ToInt(col("cpu_milli"), "cpu_milli", line);
    auto mem = ToInt(col("memory_mib"), "memory_mib", line);
    auto num = ToInt(col("num_gpu"), "num_gpu", line);
    auto milli = ToInt(col("gpu_milli"), "gpu_milli", line);
    if (!cpu.ok()) return cpu.status();
    if (!mem.ok()) return mem.status();
    if (!num.ok()) return num.status();
    if (!milli.ok()) return milli.status();
    if (*milli < 0 || *milli > 1000) {
      return absl::InvalidArgumentError(
          fmt::format("line {}: gpu_milli must be within 0..1000, got {}", line, *milli));
    }
    t.milli_cpu = *cpu;
    t.memory = *mem * kMiB;
    if (*num > 0 && *milli > 0) {
      t.gpu.count = static_cast<int32_t>(*num);
      t.gpu.milli = static_cast<int32_t>(*milli);
      t.gpu.models = sched::ParseGpuModels(col("gpu_spec"));
    }
    out.push_back(std::move(t));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

Workload SampleOpenbWorkload(std::vector<SimNode> nodes, const std::vector<SimTask>& tasks,
                             double demand_share, uint64_t seed) {
  Workload w;
  int64_t capacity = 0;
  for (const SimNode& n : nodes) capacity += int64_t{n.gpus} * sched::GpuDevices::kWholeGpu;
  w.nodes = std::move(nodes);
  w.queues.push_back(SimQueue{"default", 1});
  w.mark_gpu_milli = capacity;
  if (tasks.empty() || capacity == 0) return w;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, tasks.size() - 1);
  const auto target = static_cast<int64_t>(static_cast<double>(capacity) * demand_share);
  int64_t demand = 0;
  for (size_t i = 0; demand < target; ++i) {
    const SimTask& t = tasks[pick(rng)];
    SimJob j;
    j.name = fmt::format("task-{:06d}", i);
    j.arrival = static_cast<double>(i);
    j.tasks.push_back(t);
    j.tasks.back().name = t.name;
    demand += t.gpu.TotalMilli();
    w.jobs.push_back(std::move(j));
  }
  return w;
}

namespace {

template <typename T>
absl::StatusOr<T> Field(const YAML::Node& node, const char* key, T default_value,
                        std::string_view where) {
  const YAML::Node v = node[key];
  if (!v) return default_value;
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    return absl::InvalidArgumentError(
        fmt::format("{}.{}: \"{}\" is not a valid value", where, key, v.Scalar()));
  }
}

#define SIM_FIELD(var, node, key, def, where)   \
  auto var##_or = Field(node, key, def, where); \
  if (!var##_or.ok()) return var##_or.status(); \
  auto var = *var##_or

}  // namespace

absl::StatusOr<Workload> ParseWorkloadYaml(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("workload: {}", e.what()));
  }
  Workload w;
  const YAML::Node nodes = root["nodes"];
  if (!nodes || !nodes.IsSequence() || nodes.size() == 0) {
    return absl::InvalidArgumentError("workload: nodes must be a non-empty list");
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string where = fmt::format("nodes[{}]", i);
    const YAML::Node& n = nodes[i];
    SIM_FIELD(name, n, "name", std::string("node"), where);
    SIM_FIELD(count, n, "count", 1, where);
    SIM_FIELD(cpu, n, "cpuMilli", int64_t{0}, where);
    SIM_FIELD(mem, n, "memoryMiB", int64_t{0}, where);
    SIM_FIELD(gpus, n, "gpus", 0, where);
    SIM_FIELD(model, n, "model", std::string(), where);
    SIM_FIELD(vgpus, n, "vgpus", 0, where);
    SIM_FIELD(vgpu_shares, n, "vgpuShares", 10, where);
    SIM_FIELD(vgpu_memory, n, "vgpuMemoryMiB", int64_t{0}, where);
    SIM_FIELD(vgpu_type, n, "vgpuType", std::string("NVIDIA-GPU"), where);
    if (vgpus < 0) return absl::InvalidArgumentError(where + ".vgpus must be >= 0");
    if (vgpus > 0 && gpus > 0) {
      return absl::InvalidArgumentError(where + ": gpus and vgpus are exclusive");
    }
    if (vgpus > 0 && (vgpu_shares < 1 || vgpu_memory < 1)) {
      return absl::InvalidArgumentError(where +
                                        ": vgpus needs vgpuShares >= 1 and vgpuMemoryMiB >= 1");
    }
    if (count < 1) return absl::InvalidArgumentError(where + ".count must be >= 1");
    if (cpu <= 0) return absl::InvalidArgumentError(where + ".cpuMilli must be > 0");
    if (gpus < 0) return absl::InvalidArgumentError(where + ".gpus must be >= 0");
    for (int c = 0; c < count; ++c) {
      w.nodes.push_back(SimNode{count == 1 ? name : fmt::format("{}-{:04d}", name, c), cpu,
                                mem * kMiB, gpus, model, vgpus, vgpu_shares, vgpu_memory,
                                vgpu_type});
    }
  }
  if (const YAML::Node queues = root["queues"]; queues && queues.IsSequence()) {
    for (size_t i = 0; i < queues.size(); ++i) {
      const std::string where = fmt::format("queues[{}]", i);
      SIM_FIELD(name, queues[i], "name", std::string(), where);
      SIM_FIELD(weight, queues[i], "weight", 1, where);
      if (name.empty()) return absl::InvalidArgumentError(where + ".name is required");
      if (weight < 1) return absl::InvalidArgumentError(where + ".weight must be >= 1");
      w.queues.push_back(SimQueue{name, weight});
    }
  }
  if (std::none_of(w.queues.begin(), w.queues.end(),
                   [](const SimQueue& q) { return q.name == "default"; })) {
    w.queues.push_back(SimQueue{"default", 1});
  }
  const YAML::Node jobs = root["jobs"];
  if (!jobs || !jobs.IsSequence())
    return absl::InvalidArgumentError("workload: jobs must be a list");
  for (size_t i = 0; i < jobs.size(); ++i) {
    const std::string where = fmt::format("jobs[{}]", i);
    const YAML::Node& j = jobs[i];
    SIM_FIELD(name, j, "name", fmt::format("job-{}", i), where);
    SIM_FIELD(queue, j, "queue", std::string("default"), where);
    SIM_FIELD(arrival, j, "arrival", 0.0, where);
    SIM_FIELD(duration, j, "duration", 0.0, where);
    SIM_FIELD(count, j, "count", 1, where);
    SIM_FIELD(every, j, "every", 0.0, where);
    SIM_FIELD(replicas, j, "replicas", 1, where);
    SIM_FIELD(min_available, j, "minAvailable", replicas, where);
    SIM_FIELD(cpu, j, "cpuMilli", int64_t{0}, where);
    SIM_FIELD(mem, j, "memoryMiB", int64_t{0}, where);
    SIM_FIELD(gpus, j, "gpus", 0, where);
    SIM_FIELD(gpu_milli, j, "gpuMilli", 1000, where);
    SIM_FIELD(gpu_spec, j, "gpuSpec", std::string(), where);
    SIM_FIELD(vgpu_number, j, "vgpuNumber", 0, where);
    SIM_FIELD(vgpu_memory, j, "vgpuMemoryMiB", int64_t{0}, where);
    SIM_FIELD(vgpu_cores, j, "vgpuCores", 0, where);
    SIM_FIELD(vgpu_spread, j, "vgpuSpread", false, where);
    if (vgpu_number < 0 || vgpu_memory < 0 || vgpu_cores < 0 || vgpu_cores > 100) {
      return absl::InvalidArgumentError(
          where + ": vgpuNumber and vgpuMemoryMiB must be >= 0, vgpuCores within 0..100");
    }
    if (vgpu_number > 0 && gpus > 0) {
      return absl::InvalidArgumentError(where + ": gpus and vgpuNumber are exclusive");
    }
    if (std::none_of(w.queues.begin(), w.queues.end(),
                     [&](const SimQueue& q) { return q.name == queue; })) {
      return absl::InvalidArgumentError(
          fmt::format("{}.queue: queue \"{}\" is not in queues", where, queue));
    }
    if (replicas < 1) return absl::InvalidArgumentError(where + ".replicas must be >= 1");
    if (min_available < 1 || min_available > replicas) {
      return absl::InvalidArgumentError(where + ".minAvailable must be within 1..replicas");
    }
    if (gpu_milli < 1 || gpu_milli > 1000) {
      return absl::InvalidArgumentError(where + ".gpuMilli must be within 1..1000");
    }
    if (gpus > 1 && gpu_milli != 1000) {
      return absl::InvalidArgumentError(where + ".gpuMilli < 1000 needs gpus: 1");
    }
    if (count < 1) return absl::InvalidArgumentError(where + ".count must be >= 1");
    for (int c = 0; c < count; ++c) {
      SimJob job;
      job.name = count == 1 ? name : fmt::format("{}-{:04d}", name, c);
      job.queue = queue;
      job.arrival = arrival + every * c;
      job.duration = duration;
      job.min_available = min_available;
      for (int r = 0; r < replicas; ++r) {
        SimTask t;
        t.name = fmt::format("{}-task-{}", job.name, r);
        t.milli_cpu = cpu;
        t.memory = mem * kMiB;
        if (gpus > 0) {
          t.gpu.count = gpus;
          t.gpu.milli = gpu_milli;
          t.gpu.models = sched::ParseGpuModels(gpu_spec);
        }
        t.vgpu_number = vgpu_number;
        t.vgpu_memory = vgpu_memory;
        t.vgpu_cores = vgpu_cores;
        t.vgpu_spread = vgpu_spread;
        job.tasks.push_back(std::move(t));
      }
      w.jobs.push_back(std::move(job));
    }
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const SimJob& a, const SimJob& b) { return a.arrival < b.arrival; });
  return w;
}

}  // namespace basalt::sim
