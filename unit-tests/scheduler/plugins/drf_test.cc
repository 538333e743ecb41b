#include "scheduler/plugins/drf/drf.h"

#include <catch2/catch.hpp>

#include "unit-tests/scheduler/testing/builders.h"

namespace basalt::sched {
namespace {

using testing::Res;

TEST_CASE("drf: share is the dominant fraction of the cluster total", "[sched][drf]") {
  Resource total = Res({{"cpu", "100"}, {"memory", "100Gi"}, {"nvidia.com/gpu", "8"}});
  CHECK(DrfShare(Res({{"cpu", "10"}, {"memory", "40Gi"}}), total) == Approx(0.4));
  CHECK(DrfShare(Res({{"cpu", "10"}, {"nvidia.com/gpu", "4"}}), total) == Approx(0.5));
  CHECK(DrfShare(Resource(), total) == 0);
  // A resource the cluster does not have: x/0 = 1.
  CHECK(DrfShare(Res({{"example.com/fpga", "1"}}),
                 Res({{"cpu", "1"}, {"example.com/fpga", "0"}})) == 1);
}

}  // namespace
}  // namespace basalt::sched
