#include "scheduler/actions/gangpreempt/gangpreempt.h"

#include "scheduler/actions/gang_eviction.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class GangPreemptAction final : public Action {
 public:
  std::string_view Name() const override { return kGangPreemptActionName; }

  void Execute(Session& ssn) override {
    // The configuration was validated at load (ValidateSchedulerConfig), so the arguments parse.
    auto options = ParseGangEvictionOptions(ssn.config().ActionArguments(Name()));
    RunGangEviction(ssn, GangEvictionKind::kPreempt,
                    options.ok() ? *options : GangEvictionOptions{});
  }
};

}  // namespace

std::unique_ptr<Action> NewGangPreemptAction() { return std::make_unique<GangPreemptAction>(); }

}  // namespace basalt::sched
