#include "scheduler/plugins/proportion/proportion.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::Res;

// Reference §5: 3 nodes x 4 CPU, queues q1/q2/q3 with weights 1/2/3 requesting 10/2/12 CPU.
std::map<std::string, Resource> Example(std::optional<Resource> q3_capability,
                                        Resource q1_guarantee) {
  const Resource total = Res({{"cpu", "12"}});
  Resource all_guarantees = q1_guarantee;
  std::vector<QueueDemand> queues = {
      {"q1", 1, Res({{"cpu", "10"}}),
       RealCapability(total, all_guarantees, q1_guarantee, std::nullopt), q1_guarantee},
      {"q2", 2, Res({{"cpu", "2"}}),
       RealCapability(total, all_guarantees, Resource(), std::nullopt), Resource()},
      {"q3", 3, Res({{"cpu", "12"}}),
       RealCapability(total, all_guarantees, Resource(), q3_capability), Resource()},
  };
  return ComputeDeserved(total, queues);
}

TEST_CASE("proportion: example A, no capability -> 2.5 / 2 / 7.5 CPU", "[sched][proportion]") {
  auto d = Example(std::nullopt, Resource());
  CHECK(d["q1"].milli_cpu() == 2500);
  CHECK(d["q2"].milli_cpu() == 2000);
  CHECK(d["q3"].milli_cpu() == 7500);
}

TEST_CASE("proportion: example B, q3 capability 5 CPU -> 5 / 2 / 5 CPU", "[sched][proportion]") {
  auto d = Example(Res({{"cpu", "5"}}), Resource());
  CHECK(d["q1"].milli_cpu() == 5000);
  CHECK(d["q2"].milli_cpu() == 2000);
  CHECK(d["q3"].milli_cpu() == 5000);
}

TEST_CASE("proportion: example C, q1 guarantee 3 CPU -> 3.25 / 2 / 6.75 CPU",
          "[sched][proportion]") {
  auto d = Example(std::nullopt, Res({{"cpu", "3"}}));
  CHECK(d["q1"].milli_cpu() == 3250);
  CHECK(d["q2"].milli_cpu() == 2000);
  CHECK(d["q3"].milli_cpu() == 6750);
}

TEST_CASE("proportion: deserved stays within realCapability and above guarantee",
          "[sched][proportion]") {
  const Resource total = Res({{"cpu", "12"}, {"nvidia.com/gpu", "16"}});
  const Resource guarantee = Res({{"nvidia.com/gpu", "2"}});
  Resource cap =
      RealCapability(total, guarantee, guarantee, Res({{"cpu", "0"}, {"nvidia.com/gpu", "8"}}));
  CHECK(cap.milli_cpu() == 12000);  // cpu <= 0 in capability means unlimited
  CHECK(cap.Get("nvidia.com/gpu") == 8000);
  Resource other = RealCapability(total, guarantee, Resource(), std::nullopt);
  CHECK(other.Get("nvidia.com/gpu") == 14000);

  std::vector<QueueDemand> queues = {
      {"small", 1, Res({{"nvidia.com/gpu", "1"}}), cap, guarantee},
      {"big", 1, Res({{"nvidia.com/gpu", "40"}}), other, Resource()},
  };
  auto d = ComputeDeserved(total, queues);
  CHECK(d["small"].Get("nvidia.com/gpu") == 2000);  // raised to its guarantee
  CHECK(d["big"].Get("nvidia.com/gpu") == 14000);   // capped by realCapability
}

TEST_CASE("proportion: weights 1 and 3 split 16 GPUs 4 / 12", "[sched][proportion]") {
  const Resource total = Res({{"nvidia.com/gpu", "16"}});
  std::vector<QueueDemand> queues = {
      {"q1", 1, Res({{"nvidia.com/gpu", "20"}}), total, Resource()},
      {"q3", 3, Res({{"nvidia.com/gpu", "20"}}), total, Resource()},
  };
  auto d = ComputeDeserved(total, queues);
  CHECK(d["q1"].Get("nvidia.com/gpu") == 4000);
  CHECK(d["q3"].Get("nvidia.com/gpu") == 12000);
  CHECK(QueueShare(Res({{"nvidia.com/gpu", "2"}}), d["q1"]) == Approx(0.5));
  CHECK(QueueShare(Res({{"nvidia.com/gpu", "1"}}), Resource()) == 1.0);
  CHECK(QueueShare(Resource(), Resource()) == 0.0);
}

}  // namespace
}  // namespace basalt::sched
