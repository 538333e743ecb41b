#include "scheduler/plugins/randomscore/randomscore.h"

#include <functional>
#include <random>

#include "scheduler/framework/session.h"

namespace basalt::sched {

namespace {

class RandomScorePlugin final : public Plugin {
 public:
  RandomScorePlugin(double weight, int64_t seed) : weight_(weight), seed_(seed) {}
  std::string_view Name() const override { return kRandomScorePluginName; }
  void OnSessionOpen(Session& ssn) override {
    if (weight_ == 0) return;
    rng_.seed(static_cast<uint64_t>(seed_) ^ std::hash<std::string>{}(ssn.uid()));
    ssn.AddNodeOrderFn(Name(), [this](const TaskInfo& /*task*/, const NodeInfo& /*node*/) {
      return weight_ * 100 * std::uniform_real_distribution<double>(0, 1)(rng_);
    });
  }

 private:
  double weight_;
  int64_t seed_;
  std::mt19937_64 rng_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Plugin>> NewRandomScorePlugin(const Arguments& args) {
  auto weight = args.GetFloat("randomscore.weight", 1);
  if (!weight.ok()) return weight.status();
  auto seed = args.GetInt("randomscore.seed", 1);
  if (!seed.ok()) return seed.status();
  return std::make_unique<RandomScorePlugin>(*weight, *seed);
}

}  // namespace basalt::sched
