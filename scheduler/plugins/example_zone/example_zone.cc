#include "scheduler/plugins/example_zone/example_zone.h"

#include <map>
#include <string>

#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class ExampleZonePlugin final : public Plugin {
 public:
  ExampleZonePlugin(double weight, std::string label) : weight_(weight), label_(std::move(label)) {}

  std::string_view Name() const override { return kExampleZonePluginName; }

  void OnSessionOpen(Session& ssn) override {
    if (weight_ == 0) return;  // disabled by its weight: register nothing, cost nothing
    // The zone of each node, read once per session (labels do not change within one).
    for (const auto& [name, node] : ssn.nodes()) {
      auto it = node.labels().find(label_);
      if (it != node.labels().end()) zone_of_[name] = it->second;
    }
    // The session outlives the callbacks it holds, so capturing it is safe.
    ssn.AddNodeOrderFn(Name(), [this, &ssn](const TaskInfo& task, const NodeInfo& node) {
      return Score(ssn, task, node);
    });
  }

 private:
  double Score(const Session& ssn, const TaskInfo& task, const NodeInfo& node) const {
    auto zone = zone_of_.find(node.name());
    if (zone == zone_of_.end()) return 0;
    const JobInfo* job = ssn.FindJob(task.job_id);
    if (job == nullptr) return 0;
    int placed = 0;
    int in_zone = 0;
    for (const auto& [uid, t] : job->tasks()) {
      // Placed: holding a node now, or given one earlier in this cycle (allocated, pipelined).
      if (t.node_name.empty() || t.uid == task.uid) continue;
      if (!IsAllocatedStatus(t.status) && t.status != TaskStatus::kPipelined) continue;
      ++placed;
      auto z = zone_of_.find(t.node_name);
      if (z != zone_of_.end() && z->second == zone->second) ++in_zone;
    }
    if (placed == 0) return 0;
    return weight_ * 100.0 * in_zone / placed;
  }

  const double weight_;
  const std::string label_;
  std::map<std::string, std::string, std::less<>> zone_of_;  // node name -> zone
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewExampleZonePlugin(const Arguments& args) {
  absl::StatusOr<double> weight = args.GetFloat("example_zone.weight", 1);
  if (!weight.ok()) return weight.status();
  if (*weight < 0) {
    return absl::InvalidArgumentError(
        "example_zone.weight must not be negative (0 turns the plugin off)");
  }
  std::string label = args.GetString("example_zone.label", kDefaultZoneLabel);
  if (label.empty()) return absl::InvalidArgumentError("example_zone.label must not be empty");
  return std::make_unique<ExampleZonePlugin>(*weight, std::move(label));
}

}  // namespace basalt::sched
