#include "common/resource/resource_list.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/util/status.h"

namespace {

using basalt::MessageOf;
using basalt::resource::InitContainerRequests;
using basalt::resource::MustParse;
using basalt::resource::ResourceList;

ResourceList RL(std::initializer_list<std::pair<std::string_view, std::string_view>> items) {
  auto r = ResourceList::FromStrings(items);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("ResourceList: decodes a JSON object with extended resources and numbers",
          "[resource_list]") {
  auto r = ResourceList::Parse(R"({"cpu":"500m","memory":"64Gi","nvidia.com/gpu":1,"pods":110})");
  REQUIRE(r.ok());
  CHECK(r->size() == 4);
  CHECK(r->Get("cpu").MilliValue() == 500);
  CHECK(r->Get("memory").Value() == 68719476736);
  CHECK(r->Get("nvidia.com/gpu").Value() == 1);
  CHECK(r->Get("pods").Value() == 110);
  CHECK(r->Get("ephemeral-storage").IsZero());
  CHECK(r->ToJsonString() == R"({"cpu":"500m","memory":"64Gi","nvidia.com/gpu":"1","pods":"110"})");
}

TEST_CASE("ResourceList: malformed input names the resource", "[resource_list]") {
  auto r = ResourceList::Parse(R"({"cpu":"500m","memory":"5ZZ"})");
  REQUIRE_FALSE(r.ok());
  const std::string msg(MessageOf(r.status()));
  CHECK(msg.find("resource \"memory\"") != std::string::npos);
  CHECK(msg.find("\"5ZZ\"") != std::string::npos);
  CHECK_FALSE(ResourceList::Parse("[1]").ok());
  CHECK(ResourceList::Parse("null")->empty());
}

TEST_CASE("ResourceList: a gpu request fits only where enough gpus are free", "[resource_list]") {
  ResourceList request = RL({{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}});
  ResourceList gpu_node = RL({{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}});
  ResourceList cpu_node = RL({{"cpu", "64"}, {"memory", "512Gi"}});
  CHECK(request.LessEqual(gpu_node));
  CHECK_FALSE(request.LessEqual(cpu_node));
  CHECK(request.Exceeding(cpu_node) == std::vector<std::string>{"nvidia.com/gpu"});
  CHECK(request.Exceeding(gpu_node).empty());
  // Eight such pods fill the gpu node's gpus exactly; a ninth does not fit.
  ResourceList eight = request;
  eight.MulInt(8);
  CHECK(RL({{"nvidia.com/gpu", "8"}}).LessEqual(gpu_node));
  CHECK_FALSE(eight.LessEqual(gpu_node));  // 8 x 64Gi > 256Gi
  CHECK(eight.Exceeding(gpu_node) == std::vector<std::string>{"cpu", "memory"});
  CHECK(ResourceList().LessEqual(ResourceList()));
}

TEST_CASE("ResourceList: Add and Sub treat missing names as zero", "[resource_list]") {
  ResourceList a = RL({{"cpu", "1"}, {"memory", "1Gi"}});
  ResourceList b = RL({{"cpu", "500m"}, {"nvidia.com/gpu", "2"}});
  ResourceList sum = a + b;
  CHECK(sum.String() == "cpu 1500m, memory 1Gi, nvidia.com/gpu 2");
  ResourceList back = sum - b;
  CHECK(back == a);  // nvidia.com/gpu 0 equals missing
  CHECK(back.Has("nvidia.com/gpu"));
  back.RemoveZeros();
  CHECK_FALSE(back.Has("nvidia.com/gpu"));
  CHECK((a - a).IsZero());
  CHECK(ResourceList().IsZero());
  CHECK(ResourceList().String() == "<none>");
  CHECK((ResourceList() - b).Get("nvidia.com/gpu") == MustParse("-2"));
}

TEST_CASE("ResourceList: Max and Min are per resource", "[resource_list]") {
  ResourceList a = RL({{"cpu", "2"}, {"memory", "1Gi"}});
  ResourceList b = RL({{"cpu", "1"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}});
  CHECK(basalt::resource::Max(a, b) ==
        RL({{"cpu", "2"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}}));
  CHECK(basalt::resource::Min(a, b) == RL({{"cpu", "1"}, {"memory", "1Gi"}}));
}

TEST_CASE(
    "ResourceList: pod effective request is max(sum of containers, each init) plus "
    "overhead",
    "[resource_list]") {
  std::vector<ResourceList> containers = {RL({{"cpu", "1"}, {"memory", "1Gi"}}),
                                          RL({{"cpu", "500m"}, {"memory", "512Mi"}})};
  std::vector<InitContainerRequests> inits = {
      {RL({{"cpu", "2"}, {"memory", "256Mi"}}), false},
      {RL({{"cpu", "100m"}, {"memory", "3Gi"}}), false},
  };
  ResourceList overhead = RL({{"cpu", "250m"}});
  ResourceList eff = basalt::resource::PodEffectiveRequest(containers, inits, overhead);
  CHECK(eff.Get("cpu") == MustParse("2250m"));  // max(1.5, 2, 0.1) + 0.25
  CHECK(eff.Get("memory") == MustParse("3Gi"));
  CHECK(basalt::resource::PodEffectiveRequest(containers, {}).Get("cpu") == MustParse("1500m"));
}

TEST_CASE("ResourceList: sidecar init containers add to the steady state", "[resource_list]") {
  std::vector<ResourceList> containers = {RL({{"cpu", "1"}})};
  std::vector<InitContainerRequests> inits = {
      {RL({{"cpu", "200m"}}), true},    // sidecar keeps running
      {RL({{"cpu", "1100m"}}), false},  // runs next to the sidecar: 1.3 at peak
  };
  ResourceList eff = basalt::resource::PodEffectiveRequest(containers, inits);
  CHECK(eff.Get("cpu") == MustParse("1300m"));
  inits[1].requests = RL({{"cpu", "100m"}});
  CHECK(basalt::resource::PodEffectiveRequest(containers, inits).Get("cpu") == MustParse("1200m"));
}

TEST_CASE("ResourceList: a limit without a request counts as the request", "[resource_list]") {
  ResourceList requests = RL({{"cpu", "1"}});
  ResourceList limits = RL({{"cpu", "2"}, {"nvidia.com/gpu", "1"}});
  CHECK(basalt::resource::RequestsOrLimits(requests, limits) ==
        RL({{"cpu", "1"}, {"nvidia.com/gpu", "1"}}));
}

TEST_CASE("ResourceList: fmt prints the human-readable form", "[resource_list]") {
  CHECK(fmt::format("requested {}", RL({{"nvidia.com/gpu", "2"}, {"cpu", "8"}})) ==
        "requested cpu 8, nvidia.com/gpu 2");
}
