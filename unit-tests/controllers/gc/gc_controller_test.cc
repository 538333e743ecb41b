// The garbage collector's expiry rule for ttlSecondsAfterFinished.

#include "controllers/gc/gc_controller.h"

#include <catch2/catch.hpp>

#include "fmt/format.h"

namespace basalt::controllers {
namespace {

json::Document Job(std::string_view ttl, std::string_view phase) {
  return *json::Parse(fmt::format(
      R"({{"spec":{{{}}},"status":{{"state":{{"phase":"{}","lastTransitionTime":"2026-01-01T00:00:00Z"}}}}}})",
      ttl, phase));
}

TEST_CASE("JobExpiry: finished phases with a TTL expire TTL seconds after the last transition",
          "[controllers][gc]") {
  const api::Time finished = *api::ParseRfc3339("2026-01-01T00:00:00Z");
  for (const char* phase : {"Completed", "Failed", "Terminated", "Aborted"}) {
    auto e = JobExpiry(Job(R"("ttlSecondsAfterFinished":30)", phase));
    REQUIRE(e.has_value());
    CHECK(*e == finished + std::chrono::seconds(30));
  }
}

TEST_CASE("JobExpiry: no TTL, or a job still running, never expires", "[controllers][gc]") {
  CHECK_FALSE(JobExpiry(Job("", "Completed")));
  CHECK_FALSE(JobExpiry(Job(R"("ttlSecondsAfterFinished":30)", "Running")));
  CHECK_FALSE(JobExpiry(Job(R"("ttlSecondsAfterFinished":30)", "Completing")));
  CHECK(JobExpiry(Job(R"("ttlSecondsAfterFinished":0)", "Failed")).has_value());
}

TEST_CASE("JobExpiry: a TTL that is not a valid int32, or a negative one, never expires",
          "[controllers][gc]") {
  CHECK_FALSE(JobExpiry(Job(R"("ttlSecondsAfterFinished":-1)", "Completed")));
  CHECK_FALSE(JobExpiry(Job(R"("ttlSecondsAfterFinished":"30")", "Completed")));
  // Larger than the API's int32: never an overflowed time in the past.
  CHECK_FALSE(JobExpiry(Job(R"("ttlSecondsAfterFinished":9223372036854775807)", "Completed")));
}

}  // namespace
}  // namespace basalt::controllers
