#include "scheduler/plugins/conformance/conformance.h"

#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class ConformancePlugin final : public Plugin {
 public:
  std::string_view Name() const override { return kConformancePluginName; }

  void OnSessionOpen(Session& ssn) override {
    auto evictable = [](const TaskInfo&, const std::vector<const TaskInfo*>& candidates)
        -> std::optional<std::vector<const TaskInfo*>> {
      std::vector<const TaskInfo*> victims;
      for (const TaskInfo* t : candidates) {
        if (t->priority_class_name == "system-cluster-critical" ||
            t->priority_class_name == "system-node-critical" ||
            t->namespace_name == "kube-system") {
          continue;
        }
        victims.push_back(t);
      }
      return victims;
    };
    ssn.AddPreemptableFn(Name(), evictable);
    ssn.AddReclaimableFn(Name(), evictable);
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewConformancePlugin(const Arguments&) {
  return std::make_unique<ConformancePlugin>();
}

}  // namespace basalt::sched
