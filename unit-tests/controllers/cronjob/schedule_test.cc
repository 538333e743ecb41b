#include "controllers/cronjob/schedule.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/api/time.h"
#include "common/util/status.h"

namespace basalt::controllers {
namespace {

const std::optional<std::string> kUtc = std::string("UTC");

api::Time At(std::string_view rfc3339) {
  absl::StatusOr<api::Time> t = api::ParseRfc3339(rfc3339);
  REQUIRE(t.ok());
  return *t;
}

std::string NextOf(const CronSchedule& s, std::string_view from) {
  std::optional<api::Time> n = s.Next(At(from));
  return n ? api::FormatRfc3339(*n) : "never";
}

CronSchedule Must(std::string_view expr, const std::optional<std::string>& tz = kUtc) {
  absl::StatusOr<CronSchedule> s = CronSchedule::Parse(expr, tz);
  INFO(expr << ": " << MessageOf(s.status()));
  REQUIRE(s.ok());
  return *s;
}

std::string ErrorOf(std::string_view expr, const std::optional<std::string>& tz = kUtc) {
  absl::StatusOr<CronSchedule> s = CronSchedule::Parse(expr, tz);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(MessageOf(s.status()));
}

TEST_CASE("CronSchedule: five fields, steps, ranges, lists and names", "[controllers][cronjob]") {
  CHECK(NextOf(Must("*/1 * * * *"), "2026-01-01T10:00:30Z") == "2026-01-01T10:01:00Z");
  CHECK(NextOf(Must("* * * * *"), "2026-01-01T10:00:00Z") == "2026-01-01T10:01:00Z");
  CHECK(NextOf(Must("*/15 * * * *"), "2026-01-01T10:16:00Z") == "2026-01-01T10:30:00Z");
  CHECK(NextOf(Must("5/20 * * * *"), "2026-01-01T10:46:00Z") == "2026-01-01T11:05:00Z");
  CHECK(NextOf(Must("0 9-17/4 * * *"), "2026-01-01T13:00:00Z") == "2026-01-01T17:00:00Z");
  CHECK(NextOf(Must("30 2 1,15 * *"), "2026-01-02T00:00:00Z") == "2026-01-15T02:30:00Z");
  CHECK(NextOf(Must("0 0 1 JAN,jul *"), "2026-02-01T00:00:00Z") == "2026-07-01T00:00:00Z");
  // 2026-01-01 is a Thursday.
  CHECK(NextOf(Must("0 8 * * MON-FRI"), "2026-01-02T09:00:00Z") == "2026-01-05T08:00:00Z");
  CHECK(NextOf(Must("0 0 * * 0"), "2026-01-01T00:00:00Z") == "2026-01-04T00:00:00Z");
  CHECK(NextOf(Must("0 0 ? * SUN"), "2026-01-01T00:00:00Z") == "2026-01-04T00:00:00Z");
}

TEST_CASE("CronSchedule: day of month and day of week restricted together match either",
          "[controllers][cronjob]") {
  // The 13th, or any Friday: Friday 2026-01-02 comes first.
  CHECK(NextOf(Must("0 0 13 * 5"), "2026-01-01T00:00:00Z") == "2026-01-02T00:00:00Z");
  // `*/2` in day-of-week is restricted too (a step > 1).
  // (Sundays, Tuesdays, Thursdays, Saturdays, or the 13th: Saturday the 3rd.)
  CHECK(NextOf(Must("0 0 13 * */2"), "2026-01-01T00:00:00Z") == "2026-01-03T00:00:00Z");
  // Day of month restricted, day of week `*`: both must match (just the 13th).
  CHECK(NextOf(Must("0 0 13 * *"), "2026-01-01T00:00:00Z") == "2026-01-13T00:00:00Z");
}

TEST_CASE("CronSchedule: descriptors and @every", "[controllers][cronjob]") {
  CHECK(NextOf(Must("@hourly"), "2026-01-01T10:00:00Z") == "2026-01-01T11:00:00Z");
  CHECK(NextOf(Must("@daily"), "2026-01-01T10:00:00Z") == "2026-01-02T00:00:00Z");
  CHECK(NextOf(Must("@midnight"), "2026-01-01T10:00:00Z") == "2026-01-02T00:00:00Z");
  CHECK(NextOf(Must("@weekly"), "2026-01-01T10:00:00Z") == "2026-01-04T00:00:00Z");
  CHECK(NextOf(Must("@monthly"), "2026-01-01T10:00:00Z") == "2026-02-01T00:00:00Z");
  CHECK(NextOf(Must("@yearly"), "2026-01-01T10:00:00Z") == "2027-01-01T00:00:00Z");
  CHECK(NextOf(Must("@annually"), "2026-01-01T10:00:00Z") == "2027-01-01T00:00:00Z");
  CHECK(NextOf(Must("@every 90s"), "2026-01-01T10:00:00Z") == "2026-01-01T10:01:30Z");
  CHECK(NextOf(Must("@every 1h30m"), "2026-01-01T10:00:00Z") == "2026-01-01T11:30:00Z");
}

TEST_CASE("CronSchedule: time zones, DST gaps and repeats", "[controllers][cronjob]") {
  const CronSchedule paris = Must("0 9 * * *", std::string("Europe/Paris"));
  CHECK(NextOf(paris, "2026-01-01T00:00:00Z") == "2026-01-01T08:00:00Z");  // CET = UTC+1
  CHECK(NextOf(paris, "2026-07-01T00:00:00Z") == "2026-07-01T07:00:00Z");  // CEST = UTC+2
  CHECK(paris.FormatInZone(At("2026-01-01T08:00:00Z")) == "2026-01-01T09:00:00+01:00");
  CHECK(Must("0 9 * * *").FormatInZone(At("2026-01-01T09:00:00Z")) == "2026-01-01T09:00:00Z");
  // 2026-03-08 in New York: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist and fires at
  // the transition, 03:00 EDT (07:00Z), once.
  const CronSchedule ny = Must("30 2 * * *", std::string("America/New_York"));
  CHECK(NextOf(ny, "2026-03-08T05:00:00Z") == "2026-03-08T07:00:00Z");
  CHECK(NextOf(ny, "2026-03-08T07:00:00Z") == "2026-03-09T06:30:00Z");
  // 2026-11-01: 01:30 happens twice; it fires once (the first, EDT = 05:30Z).
  const CronSchedule ny130 = Must("30 1 * * *", std::string("America/New_York"));
  CHECK(NextOf(ny130, "2026-11-01T04:00:00Z") == "2026-11-01T05:30:00Z");
  CHECK(NextOf(ny130, "2026-11-01T05:30:00Z") == "2026-11-02T06:30:00Z");
}

TEST_CASE("CronSchedule: a schedule that never fires", "[controllers][cronjob]") {
  CHECK(NextOf(Must("0 0 30 2 *"), "2026-01-01T00:00:00Z") == "never");
  CHECK(NextOf(Must("0 0 29 2 *"), "2026-01-01T00:00:00Z") == "2028-02-29T00:00:00Z");
}

TEST_CASE("CronSchedule: errors name the part at fault", "[controllers][cronjob]") {
  CHECK(ErrorOf("") == "the schedule is empty");
  CHECK(ErrorOf("* * * *").find("expected 5 fields") != std::string::npos);
  CHECK(ErrorOf("60 * * * *") == "minute field: 60 is out of range 0-59");
  CHECK(ErrorOf("* 24 * * *") == "hour field: 24 is out of range 0-23");
  CHECK(ErrorOf("* * 0 * *") == "day of month field: 0 is out of range 1-31");
  CHECK(ErrorOf("* * * 13 *") == "month field: 13 is out of range 1-12");
  CHECK(ErrorOf("* * * * 7") == "day of week field: 7 is out of range 0-6");
  CHECK(ErrorOf("* * * FOO *") == "month field: \"FOO\" is not a number or a name");
  CHECK(ErrorOf("*/0 * * * *") == "minute field: step \"0\" must be a positive number");
  CHECK(ErrorOf("5-1 * * * *").find("the range start 5 is after its end 1") != std::string::npos);
  CHECK(ErrorOf("@fortnightly").find("unknown descriptor") != std::string::npos);
  CHECK(ErrorOf("@every soon").find("@every needs a Go duration") != std::string::npos);
  CHECK(ErrorOf("TZ=UTC * * * * *").find("spec.timeZone") != std::string::npos);
  CHECK(ErrorOf("* * * * *", std::string("Mars/Olympus")).find("unknown time zone") !=
        std::string::npos);
  CHECK(ErrorOf("* * * * *", std::string("")).find("unknown time zone") != std::string::npos);
}

}  // namespace
}  // namespace basalt::controllers
