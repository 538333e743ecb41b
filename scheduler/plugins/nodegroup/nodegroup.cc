#include "scheduler/plugins/nodegroup/nodegroup.h"

#include <algorithm>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

constexpr std::string_view kGroupLabel = "volcano.sh/nodegroup-name";

bool Contains(const std::vector<std::string>& groups, const std::string& g) {
  return std::find(groups.begin(), groups.end(), g) != groups.end();
}

std::string GroupOf(const NodeInfo& node) {
  auto it = node.labels().find(std::string(kGroupLabel));
  return it == node.labels().end() ? std::string() : it->second;
}

std::string Joined(const std::vector<std::string>& v) {
  return fmt::format("{}", fmt::join(v, ","));
}

class NodeGroupPlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kNodeGroupPluginName; }

  void OnSessionOpen(Session& ssn) override {
    ssn_ = &ssn;
    ssn.AddPredicateFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      return Predicate(task, node);
    });
    ssn.AddNodeOrderFn(Name(), [this](const TaskInfo& task, const NodeInfo& node) {
      const QueueInfo* q = QueueOf(task);
      if (q == nullptr) return 0.0;
      const std::string group = GroupOf(node);
      double score = 0;
      if (!group.empty() && Contains(q->node_group_affinity.preferred, group)) score += 100;
      if (!group.empty() && Contains(q->node_group_anti_affinity.preferred, group)) score -= 100;
      return score;
    });
  }

 private:
  const QueueInfo* QueueOf(const TaskInfo& task) const {
    const JobInfo* job = ssn_->FindJob(task.job_id);
    return job == nullptr ? nullptr : ssn_->FindQueue(job->queue);
  }

  Outcome Predicate(const TaskInfo& task, const NodeInfo& node) const {
    const std::string group = GroupOf(node);
    const std::string plugin(Name());
    if (!task.node_group.empty() && group != task.node_group) {
      return Outcome::Unresolvable(plugin, fmt::format("node(s) not in node group {} (annotation "
                                                       "scheduling.volcano.sh/node-group)",
                                                       task.node_group));
    }
    const QueueInfo* q = QueueOf(task);
    if (q == nullptr) return Outcome::Success();
    if (!q->node_group_affinity.required.empty() &&
        !Contains(q->node_group_affinity.required, group)) {
      return Outcome::Unresolvable(
          plugin, fmt::format("node(s) not in queue {}'s nodeGroupAffinity required groups [{}]",
                              q->name, Joined(q->node_group_affinity.required)));
    }
    if (!group.empty() && Contains(q->node_group_anti_affinity.required, group)) {
      return Outcome::Unresolvable(
          plugin, fmt::format("node(s) in queue {}'s nodeGroupAntiAffinity required groups [{}]",
                              q->name, Joined(q->node_group_anti_affinity.required)));
    }
    return Outcome::Success();
  }

  Session* ssn_ = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewNodeGroupPlugin(const Arguments&) {
  return std::unique_ptr<Plugin>(new NodeGroupPlugin());
}

}  // namespace basalt::sched
