#include "scheduler/api/resource.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

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

TEST_CASE("Resource: LessEqual and FirstInsufficient read scalars by name, negative idle counts",
          "[sched][resource]") {
  // A node whose idle GPUs went negative (pods the kubelet runs beyond its allocatable): a
  // request without GPUs still does not fit, one that asks for GPUs fails on them.
  Resource idle = Res({{"cpu", "8"}, {"memory", "8Gi"}});
  idle.Set("nvidia.com/gpu", -1000);
  Resource cpu_req = Res({{"cpu", "1"}});
  CHECK_FALSE(cpu_req.LessEqual(idle));
  CHECK_FALSE(cpu_req.FirstInsufficient(idle).has_value());  // no dimension it asks for is short
  Resource gpu_req = Res({{"cpu", "1"}, {"nvidia.com/gpu", "1"}});
  CHECK_FALSE(gpu_req.LessEqual(idle));
  CHECK(gpu_req.FirstInsufficient(idle) == "nvidia.com/gpu");
  // A zero request for the negative dimension is still a request for it: compared, not fit.
  Resource zero_gpu = Res({{"cpu", "1"}});
  zero_gpu.Set("nvidia.com/gpu", 0);
  CHECK_FALSE(zero_gpu.LessEqual(idle));
  // Scalars are found among several, in name order.
  Resource wide = Res({{"cpu", "8"}, {"a.io/x", "1"}, {"nvidia.com/gpu", "2"}, {"z.io/y", "3"}});
  CHECK(Res({{"nvidia.com/gpu", "2"}, {"z.io/y", "3"}}).LessEqual(wide));
  CHECK(Res({{"z.io/y", "4"}}).FirstInsufficient(wide) == "z.io/y");
  CHECK_FALSE(Res({{"b.io/q", "1"}}).LessEqual(wide));
  CHECK(Res({{"b.io/q", "1"}}).LessEqual(wide, MissingAs::kInfinity));
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

// What the API's "9223372036854775807" becomes once Quantity clamps it (cpu in milli-units).
constexpr int64_t kHuge = INT64_MAX;

TEST_CASE("Resource: sums saturate at 2^63-1 instead of wrapping negative", "[sched][resource]") {
  Resource huge;
  huge.SetMilliCpu(kHuge).Set("nvidia.com/gpu", kHuge);
  const Resource small = Res({{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}});
  Resource sum = huge + small;
  CHECK(sum.milli_cpu() == kHuge);
  CHECK(sum.Get("nvidia.com/gpu") == kHuge);
  CHECK(sum.memory() == (int64_t{1} << 30));
  CHECK(sum.IsSaturated());
  CHECK_FALSE(small.IsSaturated());
  // The order of the terms does not matter, and adding more keeps the bound.
  Resource other_order = small + huge;
  other_order += huge;
  CHECK(other_order == sum);
  // A demand that saturated is still larger than any real capacity.
  CHECK_FALSE(sum.LessEqual(Res({{"cpu", "1000000"}, {"nvidia.com/gpu", "1000000"}})));
  // Subtraction saturates too, at both ends.
  Resource negative;
  negative.SetMilliCpu(-kHuge);
  CHECK((negative - huge).milli_cpu() == INT64_MIN);
  CHECK((huge - negative).milli_cpu() == kHuge);
  CHECK(small.SubFloorZero(huge) == Res({{"memory", "1Gi"}}));
  CHECK((negative.SubFloorZero(huge)).milli_cpu() == 0);
  // Below the bound everything stays exact.
  CHECK((sum - huge).memory() == (int64_t{1} << 30));
}

TEST_CASE("Resource: Scale and SetUnits saturate", "[sched][resource]") {
  Resource huge;
  huge.SetMilliCpu(kHuge).Set("nvidia.com/gpu", kHuge / 2);
  Resource tripled = huge.Scale(3, 1);
  CHECK(tripled.milli_cpu() == kHuge);
  CHECK(tripled.Get("nvidia.com/gpu") == kHuge);
  CHECK(huge.Scale(1, 2).milli_cpu() == kHuge / 2);
  CHECK(huge.Scale(-3, 1).milli_cpu() == INT64_MIN);
  CHECK(Resource().SetUnits("nvidia.com/gpu", kHuge).Get("nvidia.com/gpu") == kHuge);
  CHECK(Resource().SetUnits("nvidia.com/gpu", 3).Get("nvidia.com/gpu") == 3000);
  CHECK(SaturatingAdd(INT64_MAX, 1) == INT64_MAX);
  CHECK(SaturatingAdd(INT64_MIN, -1) == INT64_MIN);
  CHECK(SaturatingSub(INT64_MIN, 1) == INT64_MIN);
  CHECK(SaturatingMul(INT64_MIN, -1) == INT64_MAX);
  CHECK(SaturatingMul(-2, 3) == -6);
}

TEST_CASE("Resource: a saturated value prints as a lower bound, kUnbounded as unlimited",
          "[sched][resource]") {
  CHECK(FormatQuantity("cpu", kHuge) == "9223372036854775807m or more");
  CHECK(FormatQuantity("memory", kHuge) == "9223372036854775807 or more");
  CHECK(FormatQuantity("nvidia.com/gpu", Resource::kUnbounded) == "unlimited");
  CHECK(FormatQuantity("cpu", 32000) == "32");
}

TEST_CASE("Resource: scalars iterate sorted by name whatever order they were set in",
          "[sched][resource]") {
  Resource r;
  r.SetUnits("vendor.com/z", 1).SetUnits("nvidia.com/gpu", 2).SetUnits("example.com/a", 3);
  r.SetUnits("nvidia.com/gpu", 4);  // overwrites
  std::vector<std::pair<std::string, int64_t>> seen(r.scalars().begin(), r.scalars().end());
  CHECK(seen == std::vector<std::pair<std::string, int64_t>>{
                    {"example.com/a", 3000}, {"nvidia.com/gpu", 4000}, {"vendor.com/z", 1000}});
  CHECK(r.Has("example.com/a"));
  CHECK_FALSE(r.Has("example.com/b"));
  CHECK(r.Get("example.com/b") == 0);
  Resource other;
  other.SetUnits("example.com/b", 1);
  Resource sum = r + other;
  CHECK(sum.scalars().size() == 4);
  CHECK(sum.Get("example.com/b") == 1000);
  CHECK(sum - other == r);  // b is 0 in the difference, which equals absent
}

}  // namespace
}  // namespace basalt::sched
