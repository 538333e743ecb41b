#include "scheduler/plugins/bestfit/bestfit.h"

#include <algorithm>

#include "scheduler/framework/session.h"

namespace basalt::sched {

double BestFitScore(const TaskInfo& task, const NodeInfo& node) {
  double left = 0;
  int dims = 0;
  auto add = [&](int64_t allocatable, int64_t idle, int64_t request) {
    if (allocatable <= 0) return;
    left +=
        std::max<double>(0, static_cast<double>(idle - request)) / static_cast<double>(allocatable);
    ++dims;
  };
  add(node.allocatable().milli_cpu(), node.idle().milli_cpu(), task.resreq.milli_cpu());
  add(node.allocatable().memory(), node.idle().memory(), task.resreq.memory());
  add(node.allocatable().Get(kGpu), node.idle().Get(kGpu), task.resreq.Get(kGpu));
  return dims == 0 ? 0 : 100 * (1 - left / dims);
}

namespace {

class BestFitPlugin final : public Plugin {
 public:
  explicit BestFitPlugin(double weight) : weight_(weight) {}
  std::string_view Name() const override { return kBestFitPluginName; }
  void OnSessionOpen(Session& ssn) override {
    if (weight_ == 0) return;
    ssn.AddNodeOrderFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      return weight_ * BestFitScore(task, node);
    });
  }

 private:
  double weight_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewBestFitPlugin(const Arguments& args) {
  auto weight = args.GetFloat("bestfit.weight", 1);
  if (!weight.ok()) return weight.status();
  return std::make_unique<BestFitPlugin>(*weight);
}

}  // namespace basalt::sched
