#include "common/api/time.h"

#include <catch2/catch.hpp>
#include <chrono>

#include "common/util/status.h"

using basalt::api::FormatRfc3339;
using basalt::api::FormatRfc3339Micro;
using basalt::api::ParseRfc3339;
using basalt::api::Time;

TEST_CASE("Time: RFC 3339 seconds round trip", "[api][time]") {
  auto t = ParseRfc3339("2024-05-01T10:00:00Z");
  REQUIRE(t.ok());
  CHECK(std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count() ==
        1714557600);
  CHECK(FormatRfc3339(*t) == "2024-05-01T10:00:00Z");
}

TEST_CASE("Time: Lease MicroTime keeps microseconds", "[api][time]") {
  auto t = ParseRfc3339("2024-05-01T10:00:00.123456Z");
  REQUIRE(t.ok());
  CHECK(FormatRfc3339Micro(*t) == "2024-05-01T10:00:00.123456Z");
  CHECK(FormatRfc3339(*t) == "2024-05-01T10:00:00Z");  // seconds form truncates
  auto whole = ParseRfc3339("2024-05-01T10:00:00Z");
  CHECK(FormatRfc3339Micro(*whole) == "2024-05-01T10:00:00.000000Z");
}

TEST_CASE("Time: zone offsets are converted to UTC", "[api][time]") {
  auto t = ParseRfc3339("2024-05-01T12:30:00+02:30");
  REQUIRE(t.ok());
  CHECK(FormatRfc3339(*t) == "2024-05-01T10:00:00Z");
  auto n = ParseRfc3339("2023-12-31T23:00:00-01:00");
  CHECK(FormatRfc3339(*n) == "2024-01-01T00:00:00Z");
  auto nanos = ParseRfc3339("2024-02-29T00:00:00.5z");
  REQUIRE(nanos.ok());
  CHECK(FormatRfc3339Micro(*nanos) == "2024-02-29T00:00:00.500000Z");
}

TEST_CASE("Time: times before 1970 format correctly", "[api][time]") {
  auto t = ParseRfc3339("1969-12-31T23:59:59.5Z");
  REQUIRE(t.ok());
  CHECK(FormatRfc3339Micro(*t) == "1969-12-31T23:59:59.500000Z");
}

TEST_CASE("Time: malformed timestamps are rejected with the input quoted", "[api][time]") {
  for (const char* bad :
       {"", "2024-05-01", "2024-05-01T10:00:00", "2024-02-30T00:00:00Z", "2024-05-01T25:00:00Z",
        "2024-05-01T10:00:00.Z", "2024-05-01T10:00:00Zjunk", "2024-05-01 10:00:00Z",
        "2024-05-01T10:00:00+0200"}) {
    INFO(bad);
    auto t = ParseRfc3339(bad);
    REQUIRE_FALSE(t.ok());
    CHECK(basalt::MessageOf(t.status()).find(std::string("\"") + bad + "\"") !=
          std::string_view::npos);
  }
}
