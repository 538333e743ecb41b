#include "scheduler/api/resource.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::Res;

TEST_CASE("Resource: add and subtract are exact per dimension", "[sched][resource]") {
  Resource a = Res({{"cpu", "1500m"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}});
  Resource b = Res({{"cpu", "500m"}, {"nvidia.com/gpu", "3"}});
  Resource sum = a + b;
  CHECK(sum.milli_cpu() == 2000);
  CHECK(sum.memory() == (int64_t{2} << 30));
  CHECK(sum.Get("nvidia.com/gpu") == 4000);
  CHECK(sum - b == a);
  CHECK((b - a).Get("nvidia.com/gpu") == 2000);
  CHECK(a.SubFloorZero(b).milli_cpu() == 1000);
  CHECK(a.SubFloorZero(b).Get("nvidia.com/gpu") == 0);
}

TEST_CASE("Resource: LessEqual treats dimensions missing on the right per MissingAs",
          "[sched][resource]") {
  Resource gpu = Res({{"cpu", "1"}, {"nvidia.com/gpu", "1"}});
  Resource cpu_only = Res({{"cpu", "4"}, {"memory", "1Gi"}});
  CHECK_FALSE(gpu.LessEqual(cpu_only, MissingAs::kZero));
  CHECK(gpu.LessEqual(cpu_only, MissingAs::kInfinity));
  CHECK(cpu_only.LessEqual(cpu_only));
  CHECK(Resource().LessEqual(cpu_only));
  // Only the requested dimensions count in LessEqualOn.
  Resource big_mem = Res({{"cpu", "1"}, {"memory", "64Gi"}});
  CHECK_FALSE(big_mem.LessEqual(cpu_only));
  CHECK(big_mem.LessEqualOn(cpu_only, Res({{"cpu", "1"}})));
}

TEST_CASE("Resource: IsEmpty, FirstInsufficient and ToString", "[sched][resource]") {
  CHECK(Resource().IsEmpty());
  CHECK(Res({{"nvidia.com/gpu", "0"}}).IsEmpty());
  CHECK_FALSE(Res({{"nvidia.com/gpu", "1"}}).IsEmpty());

  Resource req = Res({{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "2"}});
  CHECK(req.FirstInsufficient(Res({{"cpu", "1"}, {"memory", "512Mi"}})) == "cpu");
  CHECK(req.FirstInsufficient(Res({{"cpu", "4"}, {"memory", "512Mi"}})) == "memory");
  CHECK(req.FirstInsufficient(Res({{"cpu", "4"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}})) ==
        "nvidia.com/gpu");
  CHECK_FALSE(req.FirstInsufficient(req).has_value());

  CHECK(Res({{"cpu", "1500m"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}}).ToString() ==
        "cpu 1500m, memory 2Gi, nvidia.com/gpu 1");
  CHECK(Resource().ToString() == "cpu 0, memory 0");
}

TEST_CASE("Resource: Min, Max and Scale", "[sched][resource]") {
  Resource a = Res({{"cpu", "4"}, {"nvidia.com/gpu", "4"}});
  Resource cap = Res({{"cpu", "2"}});
  CHECK(a.Min(cap, MissingAs::kInfinity).Get("nvidia.com/gpu") == 4000);
  CHECK(a.Min(cap, MissingAs::kZero).Get("nvidia.com/gpu") == 0);
  CHECK(a.Min(cap, MissingAs::kZero).milli_cpu() == 2000);
  CHECK(cap.Max(a) == a);
  CHECK(Res({{"cpu", "12"}}).Scale(1, 6).milli_cpu() == 2000);
  CHECK(Resource::Unbounded().Scale(3, 4).milli_cpu() > 0);
}

}  // namespace
}  // namespace basalt::sched
