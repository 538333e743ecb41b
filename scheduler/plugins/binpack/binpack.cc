#include "scheduler/plugins/binpack/binpack.h"

#include "scheduler/framework/session.h"

namespace basalt::sched {

absl::StatusOr<BinpackWeights> ParseBinpackWeights(const Arguments& args) {
  BinpackWeights w;
  auto weight = args.GetFloat("binpack.weight", 1);
  if (!weight.ok()) return weight.status();
  w.weight = *weight;
  auto cpu = args.GetFloat("binpack.cpu", 1);
  if (!cpu.ok()) return cpu.status();
  auto mem = args.GetFloat("binpack.memory", 1);
  if (!mem.ok()) return mem.status();
  w.resources[std::string(kCpu)] = *cpu < 0 ? 1 : *cpu;
  w.resources[std::string(kMemory)] = *mem < 0 ? 1 : *mem;
  const std::string list = args.GetString("binpack.resources", "");
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    start = comma + 1;
    if (name.empty()) continue;
    auto rw = args.GetFloat("binpack.resources." + name, 1);
    if (!rw.ok()) return rw.status();
    w.resources[name] = *rw < 0 ? 1 : *rw;
  }
  return w;
}

double BinpackScore(const TaskInfo& task, const NodeInfo& node, const BinpackWeights& weights) {
  double score = 0;
  double weight_sum = 0;
  for (const auto& name : task.resreq.Names()) {
    const int64_t request = task.resreq.Get(name);
    if (request <= 0) continue;
    auto w = weights.resources.find(name);
    if (w == weights.resources.end()) continue;
    const int64_t allocatable = node.allocatable().Get(name);
    const int64_t after = SaturatingAdd(request, node.used().Get(name));
    if (allocatable != 0 && w->second != 0) {
      if (after > allocatable) return 0;
      score += static_cast<double>(after) * w->second / static_cast<double>(allocatable);
    }
    weight_sum += w->second;
  }
  if (weight_sum > 0) score /= weight_sum;
  return score * 100 * weights.weight;
}

namespace {

class BinpackPlugin final : public Plugin {
 public:
  explicit BinpackPlugin(BinpackWeights w) : weights_(std::move(w)) {}
  std::string_view Name() const override { return kBinpackPluginName; }
  void OnSessionOpen(Session& ssn) override {
    if (weights_.weight == 0) return;
    ssn.AddNodeOrderFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      return BinpackScore(task, node, weights_);
    });
  }

 private:
  BinpackWeights weights_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewBinpackPlugin(const Arguments& args) {
  auto w = ParseBinpackWeights(args);
  if (!w.ok()) return w.status();
  return std::make_unique<BinpackPlugin>(*std::move(w));
}

}  // namespace basalt::sched
