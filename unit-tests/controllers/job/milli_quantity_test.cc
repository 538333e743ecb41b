#include "controllers/job/milli_quantity.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace basalt::controllers {
namespace {

TEST_CASE("MilliQuantity: Kubernetes quantity strings parse exactly", "[controllers][job]") {
  struct Case {
    std::string_view text;
    int64_t milli;
  };
  for (const Case& c : std::vector<Case>{
           {"0", 0},
           {"1", 1000},
           {"500m", 500},
           {"1.5", 1500},
           {"0.1", 100},
           {"2k", 2000000},
           {"1Ki", 1024000},
           {"64Gi", 64LL * 1024 * 1024 * 1024 * 1000},
           {"1G", 1000000000000LL},
           {"1e3", 1000000},
           {"1E-3", 1},
           {"1n", 1},  // sub-milli rounds up
           {"1500u", 2},
           {"-2", -2000},
           {"+3", 3000},
           {"0.5Gi", 512LL * 1024 * 1024 * 1000},
       }) {
    INFO(c.text);
    auto q = ParseMilliQuantity(c.text);
    REQUIRE(q.ok());
    CHECK(*q == c.milli);
  }
  for (std::string_view bad : {"", "m", "1Q", "1.2.3", "1e", "10Ei"}) {
    INFO(bad);
    CHECK_FALSE(ParseMilliQuantity(bad).ok());
  }
}

TEST_CASE("MilliQuantity: formatting round-trips", "[controllers][job]") {
  CHECK(FormatMilliQuantity(2000) == "2");
  CHECK(FormatMilliQuantity(1500) == "1500m");
  CHECK(FormatMilliQuantity(0) == "0");
  for (int64_t v : {int64_t{1}, int64_t{999}, int64_t{68719476736000}, int64_t{-1500}}) {
    CHECK(*ParseMilliQuantity(FormatMilliQuantity(v)) == v);
  }
}

TEST_CASE("MilliQuantity: resource lists add and max key by key", "[controllers][job]") {
  auto doc = json::Parse(R"({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1})");
  auto list = ParseMilliResourceList(&*doc);
  REQUIRE(list.ok());
  MilliResourceList sum;
  REQUIRE(AddInto(sum, *list).ok());
  REQUIRE(AddInto(sum, *list).ok());
  CHECK(sum.at("cpu") == 1000);
  CHECK(sum.at("memory") == 2LL * 1024 * 1024 * 1024 * 1000);
  CHECK(sum.at("nvidia.com/gpu") == 2000);
  MilliResourceList m = {{"cpu", 2000}};
  MaxInto(m, *list);
  CHECK(m.at("cpu") == 2000);
  CHECK(m.at("nvidia.com/gpu") == 1000);
  MilliResourceList huge = {{"x", INT64_MAX}};
  CHECK_FALSE(AddInto(huge, huge).ok());
  json::Document out;
  json::Value v = ToJson(sum, out.GetAllocator());
  CHECK(json::GetString(v, "cpu") == "1");
  CHECK(json::GetString(v, "memory") == "2147483648");
}

}  // namespace
}  // namespace basalt::controllers
