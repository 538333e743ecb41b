#include "common/api/time.h"

#include <catch2/catch.hpp>
#include <chrono>

#include "common/util/status.h"

using basalt::api::FloorToMicros;
using basalt::api::FloorToSeconds;
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

TEST_CASE("Time: timestamps beyond the nanosecond range saturate instead of overflowing",
          "[api][time]") {
  // Fuzzer reproducer: a pod's status.startTime in year 8970.
  auto late = ParseRfc3339("8970-05-01T10:00:00Z");
  REQUIRE(late.ok());
  CHECK(*late == Time::max());
  CHECK(FormatRfc3339(*late) == "2262-04-11T23:47:16Z");
  CHECK(*late > *ParseRfc3339("2262-04-11T23:47:16Z"));
  auto last = ParseRfc3339("9999-12-31T23:59:60.999999999-23:59");
  REQUIRE(last.ok());
  CHECK(*last == Time::max());

  auto early = ParseRfc3339("0000-01-01T00:00:00+23:59");
  REQUIRE(early.ok());
  CHECK(*early == Time::min());
  CHECK(*early < *ParseRfc3339("1677-09-21T00:12:44Z"));
}

TEST_CASE("Time: the last and first representable instants parse exactly", "[api][time]") {
  auto max = ParseRfc3339("2262-04-11T23:47:16.854775807Z");
  REQUIRE(max.ok());
  CHECK(*max == Time::max());
  auto below_max = ParseRfc3339("2262-04-11T23:47:16.854775806Z");
  REQUIRE(below_max.ok());
  CHECK(below_max->time_since_epoch().count() == Time::max().time_since_epoch().count() - 1);
  CHECK(*ParseRfc3339("2262-04-11T23:47:16.854775808Z") == Time::max());

  auto min = ParseRfc3339("1677-09-21T00:12:43.145224192Z");
  REQUIRE(min.ok());
  CHECK(*min == Time::min());
  auto above_min = ParseRfc3339("1677-09-21T00:12:43.145224193Z");
  REQUIRE(above_min.ok());
  CHECK(above_min->time_since_epoch().count() == Time::min().time_since_epoch().count() + 1);
  CHECK(*ParseRfc3339("1677-09-21T00:12:43.145224191Z") == Time::min());
  CHECK(FormatRfc3339Micro(*above_min) == "1677-09-21T00:12:43.145224Z");
}

TEST_CASE("Time: FloorToSeconds and FloorToMicros floor but never below the first whole unit",
          "[api][time]") {
  const Time t = *ParseRfc3339("2024-05-01T10:00:00.123456789Z");
  CHECK(FloorToSeconds(t) == *ParseRfc3339("2024-05-01T10:00:00Z"));
  CHECK(FloorToMicros(t) == *ParseRfc3339("2024-05-01T10:00:00.123456Z"));
  const Time before_epoch = *ParseRfc3339("1969-12-31T23:59:59.5Z");
  CHECK(FloorToSeconds(before_epoch) == *ParseRfc3339("1969-12-31T23:59:59Z"));
  // A plain floor of Time::min() lies before it (overflow); the helpers stop at the first whole
  // second / microsecond a Time holds, and FormatRfc3339 of that re-parses to itself.
  CHECK(FloorToSeconds(Time::min()) == *ParseRfc3339("1677-09-21T00:12:44Z"));
  CHECK(FloorToMicros(Time::min()) == *ParseRfc3339("1677-09-21T00:12:43.145225Z"));
  CHECK(*ParseRfc3339(FormatRfc3339(FloorToSeconds(Time::min()))) == FloorToSeconds(Time::min()));
  CHECK(FloorToSeconds(Time::max()) == *ParseRfc3339("2262-04-11T23:47:16Z"));
}
