#include "scheduler/plugins/fgd/fgd.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "scheduler/framework/session.h"

namespace basalt::sched {

namespace {

using TypeKey = std::tuple<int64_t, int64_t, int32_t, int32_t, std::vector<std::string>>;

void CountTask(const TaskInfo& t, std::map<TypeKey, int64_t>& counts) {
  if (t.resreq.IsEmpty()) return;
  const bool gpu = !t.gpu.Empty();
  counts[TypeKey(t.resreq.milli_cpu(), t.resreq.memory(), gpu ? t.gpu.count : 0,
                 gpu ? t.gpu.milli : 0, gpu ? t.gpu.models : std::vector<std::string>{})]++;
}

}  // namespace

std::vector<FgdTaskType> FgdTaskTypes(const ClusterInfo& cluster) {
  std::map<TypeKey, int64_t> counts;
  for (const auto& [id, job] : cluster.jobs()) {
    for (const auto& [uid, t] : job.tasks()) CountTask(t, counts);
  }
  for (const auto& [uid, t] : cluster.foreign_tasks()) CountTask(t, counts);
  int64_t total = 0;
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
    t.weight = static_cast<double>(n) / static_cast<double>(total);
    out.push_back(std::move(t));
  }
  // Most popular first (ties in key order), so the heaviest terms are summed first.
  std::stable_sort(out.begin(), out.end(),
                   [](const FgdTaskType& a, const FgdTaskType& b) { return a.weight > b.weight; });
  return out;
}

int64_t GpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                         const std::vector<int32_t>& free_gpus, const FgdTaskType& type) {
  int64_t all = 0;
  for (int32_t f : free_gpus) all += std::max(f, 0);
  if (all == 0) return 0;
  // A task that asks for no GPU, or cannot be placed here at all, can use none of it.
  if (type.gpu.Empty() || type.milli_cpu > free_cpu || type.memory > free_memory ||
      !type.gpu.AllowsModel(model)) {
    return all;
  }
  int32_t usable = 0;
  int64_t unusable = 0;
  for (int32_t f : free_gpus) {
    if (f >= type.gpu.milli) {
      ++usable;
    } else if (f > 0) {
      unusable += f;
    }
  }
  return usable >= type.gpu.count ? unusable : all;
}

double ExpectedGpuFragmentation(int64_t free_cpu, int64_t free_memory, std::string_view model,
                                const std::vector<int32_t>& free_gpus,
                                const std::vector<FgdTaskType>& types) {
  double sum = 0;
  for (const FgdTaskType& t : types) {
    sum += t.weight *
           static_cast<double>(GpuFragmentation(free_cpu, free_memory, model, free_gpus, t));
  }
  return sum;
}

double NodeExpectedFragmentation(const NodeInfo& node, const std::vector<FgdTaskType>& types) {
  return ExpectedGpuFragmentation(node.idle().milli_cpu(), node.idle().memory(),
                                  node.gpus().model(), node.gpus().free_milli(), types);
}

namespace {

// The node's free shares after `task` takes the GPUs NodeInfo would give it.
std::vector<int32_t> FreeAfter(const TaskInfo& task, const NodeInfo& node) {
  std::vector<int32_t> free = node.gpus().free_milli();
  if (!task.gpu.Empty()) {
    for (int32_t i : node.gpus().Choose(task.gpu)) free[static_cast<size_t>(i)] -= task.gpu.milli;
  }
  return free;
}

}  // namespace

double FragmentationAfterPlacing(const TaskInfo& task, const NodeInfo& node,
                                 const std::vector<FgdTaskType>& types) {
  return ExpectedGpuFragmentation(node.idle().milli_cpu() - task.resreq.milli_cpu(),
                                  node.idle().memory() - task.resreq.memory(), node.gpus().model(),
                                  FreeAfter(task, node), types);
}

namespace {

class FgdPlugin final : public Plugin {
 public:
  explicit FgdPlugin(double weight) : weight_(weight) {}
  std::string_view Name() const override { return kFgdPluginName; }

  void OnSessionOpen(Session& ssn) override {
    if (weight_ == 0) return;
    types_ = FgdTaskTypes(ssn.cluster());
    for (const auto& [name, node] : ssn.nodes()) {
      max_capacity_ =
          std::max<double>(max_capacity_, static_cast<double>(node.gpus().CapacityMilli()));
    }
    if (max_capacity_ <= 0) max_capacity_ = GpuDevices::kWholeGpu;
    ssn.AddNodeOrderFn(
        Name(), [this](const TaskInfo& task, const NodeInfo& node) { return Score(task, node); });
    auto invalidate = [this](const TaskInfo& task) { current_.erase(task.node_name); };
    ssn.AddEventHandler(EventHandler{invalidate, invalidate});
  }

 private:
  // Packs what the fragmentation depends on: model, free CPU and memory, sorted GPU shares.
  static std::string StateKey(int64_t cpu, int64_t memory, const std::string& model,
                              std::vector<int32_t> gpus) {
    std::sort(gpus.begin(), gpus.end());
    std::string key;
    key.reserve(model.size() + 17 + 4 * gpus.size());
    key.append(reinterpret_cast<const char*>(&cpu), sizeof cpu);
    key.append(reinterpret_cast<const char*>(&memory), sizeof memory);
    key.append(reinterpret_cast<const char*>(gpus.data()), gpus.size() * sizeof(int32_t));
    key.push_back('\0');
    key.append(model);
    return key;
  }

  double Memoized(int64_t cpu, int64_t memory, const std::string& model,
                  const std::vector<int32_t>& gpus) {
    std::string key = StateKey(cpu, memory, model, gpus);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    const double f = ExpectedGpuFragmentation(cpu, memory, model, gpus, types_);
    memo_.emplace(std::move(key), f);
    return f;
  }

  double Score(const TaskInfo& task, const NodeInfo& node) {
    if (node.gpus().empty()) return weight_ * 50;  // no GPU, no GPU fragment: neutral
    auto cur = current_.find(node.name());
    if (cur == current_.end()) {
      cur = current_
                .emplace(node.name(), Memoized(node.idle().milli_cpu(), node.idle().memory(),
                                               node.gpus().model(), node.gpus().free_milli()))
                .first;
    }
    const double after = Memoized(node.idle().milli_cpu() - task.resreq.milli_cpu(),
                                  node.idle().memory() - task.resreq.memory(), node.gpus().model(),
                                  FreeAfter(task, node));
    const double delta = after - cur->second;  // in [-max_capacity_, max_capacity_]
    return weight_ * 50 * (1 - delta / max_capacity_);
  }

  double weight_;
  double max_capacity_ = 0;
  std::vector<FgdTaskType> types_;
  std::unordered_map<std::string, double> current_;  // node name -> expected fragmentation
  std::unordered_map<std::string, double> memo_;     // StateKey -> expected fragmentation
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewFgdPlugin(const Arguments& args) {
  auto weight = args.GetFloat("fgd.weight", 1);
  if (!weight.ok()) return weight.status();
  return std::make_unique<FgdPlugin>(*weight);
}

}  // namespace basalt::sched
