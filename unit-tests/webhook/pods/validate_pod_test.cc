#include "webhook/pods/validate_pod.h"

#include <catch2/catch.hpp>

#include "unit-tests/webhook/testing/builders.h"

namespace basalt::webhook {
namespace {

using testing::Run;
using testing::SimplePod;

TEST_CASE("PodValidator: disruption-budget annotations on volcano pods", "[webhook][pods]") {
  PodValidator validator({"volcano"});
  struct Case {
    std::string name;
    std::string pod;
    std::string message;
  };
  const std::string kMin = "/metadata/annotations/volcano.sh~1jdb-min-available";
  const std::string kMax = "/metadata/annotations/volcano.sh~1jdb-max-unavailable";
  std::vector<Case> cases = {
      {"no annotations", SimplePod(), ""},
      {"positive integer", SimplePod().SetString(kMin, "2"), ""},
      {"percentage", SimplePod().SetString(kMax, "30%"), ""},
      {"zero", SimplePod().SetString(kMin, "0"),
       "metadata.annotations[volcano.sh/jdb-min-available]: invalid value \"0\": must be a "
       "positive "
       "integer or a percentage between 1% and 99%"},
      {"100%", SimplePod().SetString(kMax, "100%"),
       "metadata.annotations[volcano.sh/jdb-max-unavailable]: invalid value \"100%\": must be a "
       "positive integer or a percentage between 1% and 99%"},
      {"not a number", SimplePod().SetString(kMin, "half"),
       "metadata.annotations[volcano.sh/jdb-min-available]: invalid value \"half\": must be a "
       "positive integer or a percentage between 1% and 99%"},
      {"both set", SimplePod().SetString(kMin, "1").SetString(kMax, "1"),
       "metadata.annotations: volcano.sh/jdb-min-available and volcano.sh/jdb-max-unavailable can "
       "not be set at the same time"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      AdmissionResponse r = Run(validator, Operation::kCreate, c.pod);
      if (c.message.empty()) {
        CHECK(r.allowed);
      } else {
        CHECK_FALSE(r.allowed);
        CHECK(r.message == c.message);
        CHECK(r.code == 422);
      }
    }
  }
  SECTION("pods of other schedulers are not checked") {
    CHECK(
        Run(validator, Operation::kCreate,
            SimplePod().SetString("/spec/schedulerName", "default-scheduler").SetString(kMin, "0"))
            .allowed);
  }
}

}  // namespace
}  // namespace basalt::webhook
