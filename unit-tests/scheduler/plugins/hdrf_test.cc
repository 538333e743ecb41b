#include "scheduler/plugins/drf/hdrf.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::Res;

TEST_CASE("hdrf: queue order divides the dominant GPU share by the weight", "[sched][drf]") {
  // 8 GPUs (8000 milli-units). a (weight 1) holds 2 GPUs: 0.25; b (weight 3) holds 4: 0.5 / 3.
  HdrfTree tree(Res({{"cpu", "10"}, {"nvidia.com/gpu", "8"}}));
  tree.AddJob("ns/j1", {"a"}, {1}, Res({{"nvidia.com/gpu", "2"}}), Res({{"nvidia.com/gpu", "4"}}));
  tree.AddJob("ns/j2", {"b"}, {3}, Res({{"nvidia.com/gpu", "4"}}), Res({{"nvidia.com/gpu", "8"}}));
  CHECK(tree.Share({"a"}) == Approx(0.25));
  CHECK(tree.Share({"b"}) == Approx(0.5));
  CHECK(tree.Compare({"b"}, {"a"}, true) == Approx(0.5 / 3 - 0.25));
  // b gains 2 GPUs: 0.75 / 3 = 0.25, equal to a.
  tree.Change("ns/j2", Res({{"nvidia.com/gpu", "2"}}), +1);
  CHECK(tree.Compare({"b"}, {"a"}, true) == Approx(0.0));
}

TEST_CASE("hdrf: a parent scales unsaturated children to the smallest dominant share",
          "[sched][drf]") {
  // 10 cpu, 10Gi. eng/dev holds cpu 2 (0.2), eng/prod memory 6Gi (0.6): eng counts cpu 2 and
  // 6Gi x 0.2/0.6 = 2Gi, share 0.2.
  HdrfTree tree(Res({{"cpu", "10"}, {"memory", "10Gi"}}));
  tree.AddJob("ns/dev", {"eng", "dev"}, {1, 1}, Res({{"cpu", "2"}}), Res({{"cpu", "4"}}));
  tree.AddJob("ns/prod", {"eng", "prod"}, {1, 1}, Res({{"memory", "6Gi"}}),
              Res({{"memory", "8Gi"}}));
  CHECK(tree.Share({"eng"}) == Approx(0.2));
  CHECK_FALSE(tree.Saturated({"eng"}));
  // dev now holds all it asks for (cpu 4 of 4): saturated, counted in full; eng = cpu 4 and
  // 6Gi (prod alone sets the smallest share 0.6): share 0.6.
  tree.Change("ns/dev", Res({{"cpu", "2"}}), +1);
  CHECK(tree.Saturated({"eng", "dev"}));
  CHECK(tree.Share({"eng"}) == Approx(0.6));
}

}  // namespace
}  // namespace basalt::sched
