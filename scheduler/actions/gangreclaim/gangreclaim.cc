#include "scheduler/actions/gangreclaim/gangreclaim.h"

#include "scheduler/actions/gang_eviction.h"
#include "scheduler/framework/session.h"

namespace basalt::sched {
namespace {

class GangReclaimAction final : public Action {
 public:
  std::string_view Name() const override { return kGangReclaimActionName; }

  void Execute(Session& ssn) override {
    // The configuration was validated at load (ValidateSchedulerConfig), so the arguments parse.
    auto options = ParseGangEvictionOptions(ssn.config().ActionArguments(Name()));
    RunGangEviction(ssn, GangEvictionKind::kReclaim,
                    options.ok() ? *options : GangEvictionOptions{});
  }
};

}  // namespace

std::unique_ptr<Action> NewGangReclaimAction() { return std::make_unique<GangReclaimAction>(); }

}  // namespace basalt::sched
