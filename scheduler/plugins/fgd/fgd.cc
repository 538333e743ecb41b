#include "scheduler/plugins/fgd/fgd.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "fmt/format.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {

namespace {

// cpu, memory, GPU count, GPU milli, models, vGPU?, vGPU memory, percentage, cores.
using TypeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, std::vector<std::string>, bool,
                           int64_t, int32_t, int32_t>;

// The same fields while counting, the models by reference to the task that has them (valid
// during one FgdTaskTypes call): counting hashes a few integers per task instead of copying and
// comparing a tuple with a vector of strings.
struct TypeRef {
  int64_t cpu = 0, memory = 0;
  int32_t count = 0, milli = 0;
  const std::vector<std::string>* models = nullptr;
  bool vgpu = false;
  int64_t vgpu_memory = 0;
  int32_t vgpu_percentage = kVgpuNoPercentage, vgpu_cores = 0;

  bool operator==(const TypeRef& o) const {
    return cpu == o.cpu && memory == o.memory && count == o.count && milli == o.milli &&
           vgpu == o.vgpu && vgpu_memory == o.vgpu_memory && vgpu_percentage == o.vgpu_percentage &&
           vgpu_cores == o.vgpu_cores && *models == *o.models;
  }
  TypeKey Key() const {
    return TypeKey(cpu, memory, count, milli, *models, vgpu, vgpu_memory, vgpu_percentage,
                   vgpu_cores);
  }
};

struct TypeRefHash {
  size_t operator()(const TypeRef& t) const {
    uint64_t h = 1469598103934665603ULL;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
    mix(static_cast<uint64_t>(t.cpu));
    mix(static_cast<uint64_t>(t.memory));
    mix((static_cast<uint64_t>(static_cast<uint32_t>(t.count)) << 32) |
        static_cast<uint32_t>(t.milli));
    mix(t.models->size());
    mix(static_cast<uint64_t>(t.vgpu_memory) ^ (t.vgpu ? 1ULL << 63 : 0));
    mix((static_cast<uint64_t>(static_cast<uint32_t>(t.vgpu_percentage)) << 32) |
        static_cast<uint32_t>(t.vgpu_cores));
    return static_cast<size_t>(h);
  }
};

using TypeCounts = std::unordered_map<TypeRef, int64_t, TypeRefHash>;

const std::vector<std::string>& NoModels() {
  static const std::vector<std::string> kNone;
  return kNone;
}

void CountTask(const TaskInfo& t, TypeCounts& counts) {
  if (t.resreq.IsEmpty()) return;
  TypeRef r;
  r.cpu = t.resreq.milli_cpu();
  r.memory = t.resreq.memory();
  r.models = &NoModels();
  if (t.vgpu != nullptr && !t.vgpu->Empty()) {
    // The per-GPU share of a multi-container pod is taken from its first container.
    const VgpuContainerRequest& c = t.vgpu->containers.front();
    r.count = static_cast<int32_t>(t.vgpu->TotalNumber());
    r.vgpu = true;
    r.vgpu_memory = c.memory;
    r.vgpu_percentage = c.memory_percentage;
    r.vgpu_cores = c.cores;
  } else if (!t.gpu.Empty()) {
    r.count = t.gpu.count;
    r.milli = t.gpu.milli;
    r.models = &t.gpu.models;
  } else {
    // Only the nvidia.com/gpu scalar: whole GPUs.
    r.count = static_cast<int32_t>(t.resreq.Get(kGpu) / GpuDevices::kWholeGpu);
    r.milli = r.count > 0 ? GpuDevices::kWholeGpu : 0;
  }
  ++counts[r];
}

// Per mille of a GPU of `device_memory` MiB that a vGPU type takes on each of its GPUs; more
// than 1000 when it does not fit on such a GPU at all.
int32_t VgpuShare(const FgdTaskType& type, int64_t device_memory) {
  int64_t mem = GpuDevices::kWholeGpu;
  if (type.vgpu_memory_percentage <= 100) {
    mem = int64_t{type.vgpu_memory_percentage} * 10;
  } else if (type.vgpu_memory > 0) {
    if (device_memory <= 0) return GpuDevices::kWholeGpu + 1;
    mem = (type.vgpu_memory * GpuDevices::kWholeGpu + device_memory - 1) / device_memory;
  }
  const int64_t share = std::max<int64_t>({mem, int64_t{type.vgpu_cores} * 10, 1});
  return static_cast<int32_t>(std::min<int64_t>(share, GpuDevices::kWholeGpu + 1));
}

// Free per mille of a vGPU device after taking `memory` MiB, `cores` percent and `shares`.
int32_t VgpuFree(const VgpuDevice& d, int64_t memory, int32_t cores, int32_t shares) {
  if (!d.healthy || d.memory <= 0 || d.used_shares + shares >= d.shares) return 0;
  const int64_t mem = (d.memory - d.used_memory - memory) * GpuDevices::kWholeGpu / d.memory;
  const int64_t core = int64_t{100 - d.used_cores - cores} * 10;
  return static_cast<int32_t>(std::clamp<int64_t>(std::min(mem, core), 0, GpuDevices::kWholeGpu));
}

}  // namespace

namespace {

// Types with their (unnormalised) weights -> weights summing to 1, most popular first (ties in
// key order, so the heaviest terms are summed first).
std::vector<FgdTaskType> TypesFromCounts(const std::map<TypeKey, double>& counts) {
  double total = 0;
  for (const auto& [k, n] : counts) total += n;
  std::vector<FgdTaskType> out;
  out.reserve(counts.size());
  for (const auto& [k, n] : counts) {
    FgdTaskType t;
    t.milli_cpu = std::get<0>(k);
    t.memory = std::get<1>(k);
    t.gpu.count = std::get<2>(k);
    t.gpu.milli = std::get<3>(k);
    t.gpu.models = std::get<4>(k);
    t.vgpu = std::get<5>(k);
    t.vgpu_memory = std::get<6>(k);
    t.vgpu_memory_percentage = std::get<7>(k);
    t.vgpu_cores = std::get<8>(k);
    t.weight = n / total;
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FgdTaskType& a, const FgdTaskType& b) { return a.weight > b.weight; });
  return out;
}

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<FgdTaskType> FgdTaskTypes(const ClusterInfo& cluster) {
  TypeCounts refs;
  for (const auto& [id, job] : cluster.jobs()) {
    for (const auto& [uid, t] : job.tasks()) CountTask(t, refs);
  }
  for (const auto& [uid, t] : cluster.foreign_tasks()) CountTask(t, refs);
  std::map<TypeKey, double> counts;
  for (const auto& [ref, n] : refs) counts.emplace(ref.Key(), static_cast<double>(n));
  return TypesFromCounts(counts);
}

absl::StatusOr<std::vector<FgdTaskType>> ReadFgdWorkload(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(fmt::format("fgd.workloadFrom: cannot read {}", path));
  std::string line;
  if (!std::getline(in, line)) {
    return absl::InvalidArgumentError(fmt::format("fgd.workloadFrom: {}: empty file", path));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string_view> header = SplitCsv(line);
  auto column = [&header](std::string_view name) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int cpu_col = column("cpu_milli"), mem_col = column("memory_mib"),
            num_col = column("num_gpu"), milli_col = column("gpu_milli"),
            spec_col = column("gpu_spec"), weight_col = column("weight");
  if (cpu_col < 0 || mem_col < 0 || num_col < 0 || milli_col < 0) {
    return absl::InvalidArgumentError(fmt::format(
        "fgd.workloadFrom: {}: the header must name cpu_milli, memory_mib, num_gpu and gpu_milli",
        path));
  }
  std::map<TypeKey, double> counts;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string_view> cols = SplitCsv(line);
    auto bad = [&](std::string_view what) {
      return absl::InvalidArgumentError(
          fmt::format("fgd.workloadFrom: {}: line {}: {}", path, line_no, what));
    };
    auto cell = [&cols](int c) {
      return c >= 0 && static_cast<size_t>(c) < cols.size() ? cols[static_cast<size_t>(c)]
                                                            : std::string_view();
    };
    auto integer = [&](int c, int64_t* out) {
      const std::string_view v = cell(c);
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
      return ec == std::errc() && p == v.data() + v.size() && !v.empty() && *out >= 0;
    };
    int64_t cpu = 0, mem = 0, num = 0, milli = 0;
    if (!integer(cpu_col, &cpu)) return bad("cpu_milli must be an integer >= 0");
    if (!integer(mem_col, &mem)) return bad("memory_mib must be an integer >= 0");
    if (!integer(num_col, &num)) return bad("num_gpu must be an integer >= 0");
    if (!integer(milli_col, &milli) || milli > GpuDevices::kWholeGpu) {
      return bad("gpu_milli must be an integer within 0..1000");
    }
    double weight = 1;
    if (weight_col >= 0) {
      const std::string w(cell(weight_col));
      std::istringstream ws(w);
      if (!(ws >> weight) || !ws.eof() || !(weight > 0)) return bad("weight must be a number > 0");
    }
    // The task a row describes, as CountTask sees it: memory in bytes, the GPU request only
    // when both num_gpu and gpu_milli are positive (basalt-sim's reading of the trace).
    const bool gpu = num > 0 && milli > 0;
    if (cpu == 0 && mem == 0 && !gpu) continue;  // an empty request: not a type (CountTask)
    TypeKey key(cpu, mem * (int64_t{1} << 20), gpu ? static_cast<int32_t>(num) : 0,
                gpu ? static_cast<int32_t>(milli) : 0,
                gpu ? ParseGpuModels(cell(spec_col)) : std::vector<std::string>(), false, 0,
                kVgpuNoPercentage, 0);
    counts[std::move(key)] += weight;
  }
  if (counts.empty()) {
    return absl::InvalidArgumentError(
        fmt::format("fgd.workloadFrom: {}: no task with a resource request", path));
  }
  return TypesFromCounts(counts);
}

namespace {

FgdGpuView VgpuView(const std::vector<VgpuDevice>& devices) {
  FgdGpuView v;
  v.kind = FgdGpuView::Kind::kVgpu;
  v.model = devices.front().type;
  v.device_memory = devices.front().memory;
  for (const VgpuDevice& d : devices) v.free.push_back(VgpuFree(d, 0, 0, 0));
  return v;
}

}  // namespace

size_t GpuCountOf(const NodeInfo& node) {
  if (!node.gpus().empty()) return static_cast<size_t>(node.gpus().size());
  if (!node.vgpus().empty()) return node.vgpus().devices().size();
  return static_cast<size_t>(
      std::max<int64_t>(node.allocatable().Get(kGpu) / GpuDevices::kWholeGpu, 0));
}

FgdGpuView GpuViewOf(const NodeInfo& node) {
  FgdGpuView v;
  if (!node.gpus().empty()) {
    v.kind = FgdGpuView::Kind::kDevices;
    v.model = node.gpus().model();
    v.free = node.gpus().free_milli();
  } else if (!node.vgpus().empty()) {
    v = VgpuView(node.vgpus().devices());
  } else if (const int64_t n = node.allocatable().Get(kGpu) / GpuDevices::kWholeGpu; n > 0) {
    v.kind = FgdGpuView::Kind::kWholeScalar;
    const int64_t idle = std::clamp<int64_t>(node.idle().Get(kGpu) / GpuDevices::kWholeGpu, 0, n);
    v.free.assign(static_cast<size_t>(n), 0);
    std::fill_n(v.free.begin(), idle, GpuDevices::kWholeGpu);
  }
  return v;
}

int64_t GpuFragmentation(int64_t free_cpu, int64_t free_memory, const FgdGpuView& view,
                         const FgdTaskType& type) {
  int64_t all = 0;
  for (int32_t f : view.free) all += std::max(f, 0);
  if (all == 0) return 0;
  // A task that asks for no GPU, or cannot be placed here at all, can use none of it.
  if (type.gpu.count <= 0 || type.milli_cpu > free_cpu || type.memory > free_memory) return all;
  int32_t milli = type.gpu.milli;
  if (view.kind == FgdGpuView::Kind::kVgpu) {
    if (!type.vgpu) return all;
    milli = VgpuShare(type, view.device_memory);
    if (milli > GpuDevices::kWholeGpu) return all;
  } else if (type.vgpu || milli <= 0 || !type.gpu.AllowsModel(view.model)) {
    return all;
  }
  int32_t usable = 0;
  int64_t unusable = 0;
  for (int32_t f : view.free) {
    if (f >= milli) {
      ++usable;
    } else if (f > 0) {
      unusable += f;
    }
  }
  return usable >= type.gpu.count ? unusable : all;
}

double ExpectedGpuFragmentation(int64_t free_cpu, int64_t free_memory, const FgdGpuView& view,
                                const std::vector<FgdTaskType>& types) {
  double sum = 0;
  for (const FgdTaskType& t : types) {
    sum += t.weight * static_cast<double>(GpuFragmentation(free_cpu, free_memory, view, t));
  }
  return sum;
}

FgdHostPerGpu HostPerGpuMilli(const std::vector<FgdTaskType>& types) {
  double cpu = 0, memory = 0, gpu = 0;
  for (const FgdTaskType& t : types) {
    if (t.vgpu || t.gpu.count <= 0 || t.gpu.milli <= 0) continue;
    cpu += t.weight * static_cast<double>(t.milli_cpu);
    memory += t.weight * static_cast<double>(t.memory);
    gpu += t.weight * t.gpu.count * t.gpu.milli;
  }
  if (gpu <= 0) return {};
  return FgdHostPerGpu{cpu / gpu, memory / gpu};
}

double StrandedGpu(int64_t free_cpu, int64_t free_memory, const FgdGpuView& view,
                   const FgdHostPerGpu& per_gpu) {
  if (view.kind == FgdGpuView::Kind::kVgpu || view.kind == FgdGpuView::Kind::kNone) return 0;
  double free = 0;
  for (int32_t f : view.free) free += std::max(f, 0);
  double usable = free;
  if (per_gpu.milli_cpu > 0) {
    usable =
        std::min(usable, static_cast<double>(std::max<int64_t>(free_cpu, 0)) / per_gpu.milli_cpu);
  }
  if (per_gpu.memory > 0) {
    usable =
        std::min(usable, static_cast<double>(std::max<int64_t>(free_memory, 0)) / per_gpu.memory);
  }
  return free - usable;
}

namespace {

FgdGpuView DevicesView(std::string_view model, const std::vector<int32_t>& free_gpus) {
  FgdGpuView v;
  v.kind = FgdGpuView::Kind::kDevices;
  v.model = std::string(model);
  v.free = free_gpus;
  return v;
}

}  // namespace

int64_t GpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                         const std::vector<int32_t>& free_gpus, const FgdTaskType& type) {
  return GpuFragmentation(free_cpu, free_memory, DevicesView(model, free_gpus), type);
}

double ExpectedGpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                                const std::vector<int32_t>& free_gpus,
                                const std::vector<FgdTaskType>& types) {
  return ExpectedGpuFragmentation(free_cpu, free_memory, DevicesView(model, free_gpus), types);
}

double NodeExpectedFragmentation(const NodeInfo& node, const std::vector<FgdTaskType>& types) {
  return ExpectedGpuFragmentation(node.idle().milli_cpu(), node.idle().memory(), GpuViewOf(node),
                                  types);
}

FgdGpuView GpuViewAfter(const TaskInfo& task, const NodeInfo& node) {
  FgdGpuView v = GpuViewOf(node);
  const HostLeft left{node.idle().milli_cpu() - task.resreq.milli_cpu(),
                      node.idle().memory() - task.resreq.memory()};
  switch (v.kind) {
    case FgdGpuView::Kind::kDevices:
      if (!task.gpu.Empty()) {
        for (int32_t i : node.gpus().Choose(task.gpu, left)) {
          v.free[static_cast<size_t>(i)] -= task.gpu.milli;
        }
      }
      break;
    case FgdGpuView::Kind::kWholeScalar: {
      int64_t take = task.resreq.Get(kGpu) / GpuDevices::kWholeGpu;
      for (int32_t& f : v.free) {
        if (take <= 0) break;
        if (f == GpuDevices::kWholeGpu) {
          f = 0;
          --take;
        }
      }
      break;
    }
    case FgdGpuView::Kind::kVgpu: {
      if (task.vgpu == nullptr || task.vgpu->Empty()) break;
      const VgpuFit fit = node.vgpus().Fit(*task.vgpu, left);
      const std::vector<VgpuDevice>& devs = node.vgpus().devices();
      std::vector<int64_t> mem(devs.size(), 0);
      std::vector<int32_t> cores(devs.size(), 0), shares(devs.size(), 0);
      for (const auto& container : fit.assignment) {
        for (const VgpuContainerDevice& got : container) {
          for (size_t i = 0; i < devs.size(); ++i) {
            if (devs[i].uuid != got.uuid) continue;
            mem[i] += got.memory;
            cores[i] += got.cores;
            ++shares[i];
          }
        }
      }
      for (size_t i = 0; i < devs.size(); ++i) {
        if (shares[i] > 0) v.free[i] = VgpuFree(devs[i], mem[i], cores[i], shares[i]);
      }
      break;
    }
    case FgdGpuView::Kind::kNone:
      break;
  }
  return v;
}

double FragmentationAfterPlacing(const TaskInfo& task, const NodeInfo& node,
                                 const std::vector<FgdTaskType>& types) {
  return ExpectedGpuFragmentation(node.idle().milli_cpu() - task.resreq.milli_cpu(),
                                  node.idle().memory() - task.resreq.memory(),
                                  GpuViewAfter(task, node), types);
}

namespace {

// The learned task types and a memo of expected fragmentation by node state, shared by the
// plugin and the GPU choice costs it sets on the session's nodes (basalt-sim keeps its nodes
// across sessions; each session's fgd sets them again).
struct FgdState {
  std::vector<FgdTaskType> types;
  double stranding_weight = 0;
  FgdHostPerGpu per_gpu;                         // of `types`, for the stranding term
  std::unordered_map<std::string, double> memo;  // StateKey -> expected fragmentation

  // Packs what the fragmentation depends on: free CPU and memory, kind, device memory, sorted
  // GPU shares, model.
  static std::string StateKey(int64_t cpu, int64_t memory, const FgdGpuView& view) {
    std::vector<int32_t> gpus = view.free;
    std::sort(gpus.begin(), gpus.end());
    const auto kind = static_cast<char>(view.kind);
    std::string key;
    key.reserve(view.model.size() + 26 + 4 * gpus.size());
    key.append(reinterpret_cast<const char*>(&cpu), sizeof cpu);
    key.append(reinterpret_cast<const char*>(&memory), sizeof memory);
    key.append(reinterpret_cast<const char*>(&view.device_memory), sizeof view.device_memory);
    key.push_back(kind);
    key.append(reinterpret_cast<const char*>(gpus.data()), gpus.size() * sizeof(int32_t));
    key.push_back('\0');
    key.append(view.model);
    return key;
  }

  double Memoized(int64_t cpu, int64_t memory, const FgdGpuView& view) {
    std::string key = StateKey(cpu, memory, view);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    double f = ExpectedGpuFragmentation(cpu, memory, view, types);
    if (stranding_weight > 0) f += stranding_weight * StrandedGpu(cpu, memory, view, per_gpu);
    memo.emplace(std::move(key), f);
    return f;
  }
};

class FgdPlugin final : public Plugin {
 public:
  // `target`: the workload's task types given up front (fgd.workloadFrom), null to learn them.
  FgdPlugin(double weight, double stranding_weight,
            std::shared_ptr<const std::vector<FgdTaskType>> target)
      : weight_(weight), stranding_weight_(stranding_weight), target_(std::move(target)) {}
  std::string_view Name() const override { return kFgdPluginName; }

  void OnSessionOpen(Session& ssn) override {
    if (weight_ == 0) return;
    state_ = std::make_shared<FgdState>();
    state_->types = target_ != nullptr ? *target_ : FgdTaskTypes(ssn.cluster());
    state_->stranding_weight = stranding_weight_;
    if (stranding_weight_ > 0) state_->per_gpu = HostPerGpuMilli(state_->types);
    // Inside a node, a shared task takes the GPU whose use grows the node's expected
    // fragmentation least (the GPU choice hooks of GpuDevices and VgpuDevices).
    // One cost per GPU model (it depends on the node only through the model), shared by the
    // nodes of that model, and one for every vGPU node.
    std::shared_ptr<FgdState> state = state_;
    std::map<std::string, std::shared_ptr<const GpuChoiceCost>, std::less<>> gpu_costs;
    std::shared_ptr<const VgpuChoiceCost> vgpu_cost;
    for (auto& [name, node] : ssn.nodes()) {
      max_capacity_ = std::max<double>(
          max_capacity_, static_cast<double>(GpuCountOf(node)) * GpuDevices::kWholeGpu);
      if (!node.gpus().empty()) {
        auto it = gpu_costs.find(node.gpus().model());
        if (it == gpu_costs.end()) {
          it = gpu_costs
                   .emplace(node.gpus().model(),
                            std::make_shared<const GpuChoiceCost>(
                                [state, model = node.gpus().model()](
                                    const std::vector<int32_t>& free, const HostLeft& left) {
                                  FgdGpuView v;
                                  v.kind = FgdGpuView::Kind::kDevices;
                                  v.model = model;
                                  v.free = free;
                                  return state->Memoized(left.milli_cpu, left.memory, v);
                                }))
                   .first;
        }
        node.mutable_gpus().set_choice_cost(it->second);
      }
      if (!node.vgpus().empty()) {
        if (vgpu_cost == nullptr) {
          vgpu_cost = std::make_shared<const VgpuChoiceCost>(
              [state](const std::vector<VgpuDevice>& devices, const HostLeft& left) {
                return state->Memoized(left.milli_cpu, left.memory, VgpuView(devices));
              });
        }
        node.vgpus().set_choice_cost(vgpu_cost);
      }
    }
    if (max_capacity_ <= 0) max_capacity_ = GpuDevices::kWholeGpu;
    ssn.AddNodeOrderFn(
        Name(), [this](const TaskInfo& task, const NodeInfo& node) { return Score(task, node); });
    auto invalidate = [this, &ssn](const TaskInfo& task) {
      if (const NodeInfo* node = ssn.FindNode(task.node_name); node != nullptr) {
        current_.erase(node);
      }
    };
    ssn.AddEventHandler(EventHandler{invalidate, invalidate});
  }

 private:
  // What fgd remembers of a node between its allocate/deallocate events: its expected
  // fragmentation and an id of its state (-1 for vGPU nodes, whose state the key does not
  // capture: their score is computed every time).
  struct NodeState {
    double fragmentation = -1;  // -1: no GPU
    int64_t state_id = -1;
  };

  // The id of a task's shape: what GpuViewAfter and the HostLeft it passes depend on (CPU,
  // memory, the nvidia.com/gpu scalar, the GpuRequest with its models).
  int64_t TaskShapeId(const TaskInfo& task) {
    if (&task == last_task_ && task.uid == last_task_uid_) return last_shape_id_;
    std::string key;
    const int64_t cpu = task.resreq.milli_cpu(), mem = task.resreq.memory(),
                  gpu = task.resreq.Get(kGpu);
    key.append(reinterpret_cast<const char*>(&cpu), sizeof cpu);
    key.append(reinterpret_cast<const char*>(&mem), sizeof mem);
    key.append(reinterpret_cast<const char*>(&gpu), sizeof gpu);
    key.append(reinterpret_cast<const char*>(&task.gpu.count), sizeof task.gpu.count);
    key.append(reinterpret_cast<const char*>(&task.gpu.milli), sizeof task.gpu.milli);
    for (const std::string& m : task.gpu.models) {
      key.append(m);
      key.push_back('\0');
    }
    last_task_ = &task;
    last_task_uid_ = task.uid;
    last_shape_id_ = shape_ids_.emplace(std::move(key), shape_ids_.size()).first->second;
    return last_shape_id_;
  }

  const NodeState& StateOf(const NodeInfo& node) {
    auto cur = current_.find(&node);
    if (cur != current_.end()) return cur->second;
    NodeState st;
    const FgdGpuView view = GpuViewOf(node);
    if (view.kind != FgdGpuView::Kind::kNone) {
      const int64_t cpu = node.idle().milli_cpu(), mem = node.idle().memory();
      st.fragmentation = state_->Memoized(cpu, mem, view);
      if (view.kind != FgdGpuView::Kind::kVgpu) {
        std::string key = FgdState::StateKey(cpu, mem, view);
        st.state_id = state_ids_.emplace(std::move(key), state_ids_.size()).first->second;
      }
    }
    return current_.emplace(&node, st).first->second;
  }

  double Score(const TaskInfo& task, const NodeInfo& node) {
    const NodeState& st = StateOf(node);
    if (st.fragmentation < 0) return weight_ * 50;  // no GPU, no GPU fragment: neutral
    // The fragmentation after placing a task of this shape on a node in this state (per-GPU
    // or whole-GPU accounting: the GPUs the node would choose depend only on the state).
    double after = 0;
    auto compute = [&] {
      return state_->Memoized(node.idle().milli_cpu() - task.resreq.milli_cpu(),
                              node.idle().memory() - task.resreq.memory(),
                              GpuViewAfter(task, node));
    };
    if (st.state_id < 0) {
      after = compute();
    } else {
      const uint64_t key =
          (static_cast<uint64_t>(st.state_id) << 32) | static_cast<uint64_t>(TaskShapeId(task));
      auto it = after_.find(key);
      if (it == after_.end()) it = after_.emplace(key, compute()).first;
      after = it->second;
    }
    const double delta = after - st.fragmentation;  // in [-max_capacity_, max_capacity_]
    return weight_ * 50 * (1 - delta / max_capacity_);
  }

  double weight_;
  double stranding_weight_;
  std::shared_ptr<const std::vector<FgdTaskType>> target_;
  double max_capacity_ = 0;
  std::shared_ptr<FgdState> state_;
  // By node: the session's nodes stay in place while it is open.
  std::unordered_map<const NodeInfo*, NodeState> current_;
  // Per session: ids of node states and task shapes, and the fragmentation after placing a
  // shape on a state ((state id << 32) | shape id).
  std::unordered_map<std::string, int64_t> state_ids_, shape_ids_;
  std::unordered_map<uint64_t, double> after_;
  const TaskInfo* last_task_ = nullptr;
  std::string last_task_uid_;
  int64_t last_shape_id_ = -1;
};

}  // namespace

namespace {

// The plugin is built for every session: a workload file is read once per path, size and
// modification time.
absl::StatusOr<std::shared_ptr<const std::vector<FgdTaskType>>> CachedWorkload(
    const std::string& path) {
  struct Entry {
    std::filesystem::file_time_type mtime;
    uintmax_t size = 0;
    std::shared_ptr<const std::vector<FgdTaskType>> types;
  };
  static std::mutex mu;
  static std::map<std::string, Entry, std::less<>> cache;
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path, ec);
  const uintmax_t size = ec ? 0 : std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(fmt::format("fgd.workloadFrom: cannot read {}", path));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it != cache.end() && it->second.mtime == mtime && it->second.size == size) {
    return it->second.types;
  }
  auto types = ReadFgdWorkload(path);
  if (!types.ok()) return types.status();
  auto shared = std::make_shared<const std::vector<FgdTaskType>>(*std::move(types));
  cache[path] = Entry{mtime, size, shared};
  return shared;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewFgdPlugin(const Arguments& args) {
  auto weight = args.GetFloat("fgd.weight", 1);
  if (!weight.ok()) return weight.status();
  auto stranding = args.GetFloat("fgd.strandingWeight", 0);
  if (!stranding.ok()) return stranding.status();
  if (*stranding < 0) {
    return absl::InvalidArgumentError(
        fmt::format("fgd.strandingWeight must be >= 0, got {}", *stranding));
  }
  std::shared_ptr<const std::vector<FgdTaskType>> target;
  if (const std::string path = args.GetString("fgd.workloadFrom", ""); !path.empty()) {
    auto types = CachedWorkload(path);
    if (!types.ok()) return absl::InvalidArgumentError(types.status().message());
    target = *std::move(types);
  }
  return std::make_unique<FgdPlugin>(*weight, *stranding, std::move(target));
}

}  // namespace basalt::sched
