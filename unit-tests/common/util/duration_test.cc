#include "common/util/duration.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string_view>
#include <vector>

namespace basalt {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST_CASE("ParseGoDuration: Go durations parse and print like Go", "[duration]") {
  struct Case {
    std::string_view text;
    int64_t ms;
    std::string_view printed;
  };
  for (const Case& c : std::vector<Case>{{"10s", 10000, "10s"},
                                         {"1m30s", 90000, "1m30s"},
                                         {"1.5h", 5400000, "1h30m0s"},
                                         {"300ms", 300, "300ms"},
                                         {"2h45m", 9900000, "2h45m0s"},
                                         {"0", 0, "0s"},
                                         {"1.5s", 1500, "1.5s"},
                                         {"10m", 600000, "10m0s"}}) {
    INFO(c.text);
    auto d = ParseGoDuration(c.text);
    REQUIRE(d.ok());
    CHECK(*d == milliseconds(c.ms));
    CHECK(FormatGoDuration(*d) == c.printed);
  }
  for (std::string_view bad : {"", "10", "1x", "s", "1.s5"}) {
    INFO(bad);
    CHECK_FALSE(ParseGoDuration(bad).ok());
  }
}

TEST_CASE("ParseGoDuration: Go duration syntax", "[duration]") {
  CHECK(*ParseGoDuration("15s") == seconds(15));
  CHECK(*ParseGoDuration("1m30s") == seconds(90));
  CHECK(*ParseGoDuration("1.5h") == minutes(90));
  CHECK(*ParseGoDuration("250ms") == milliseconds(250));
  CHECK(*ParseGoDuration("0") == nanoseconds::zero());
  CHECK_FALSE(ParseGoDuration("").ok());
  CHECK_FALSE(ParseGoDuration("10").ok());
  CHECK_FALSE(ParseGoDuration("s").ok());
  CHECK_FALSE(ParseGoDuration("5d").ok());
}

TEST_CASE("ParseGoDuration: signs, small units, fractions and overflow as Go", "[duration]") {
  CHECK(*ParseGoDuration("-1.5s") == milliseconds(-1500));
  CHECK(*ParseGoDuration("+2m") == minutes(2));
  CHECK(*ParseGoDuration("-0") == nanoseconds::zero());
  CHECK(*ParseGoDuration(".5s") == milliseconds(500));
  CHECK(*ParseGoDuration("1.s") == seconds(1));
  CHECK(*ParseGoDuration("1h1m1s1ms1us1ns") ==
        hours(1) + minutes(1) + seconds(1) + milliseconds(1) + microseconds(1) + nanoseconds(1));
  CHECK(*ParseGoDuration("3\xC2\xB5s") == microseconds(3));
  CHECK(*ParseGoDuration("3\xCE\xBCs") == microseconds(3));
  CHECK(*ParseGoDuration("0.000000001s") == nanoseconds(1));
  CHECK(*ParseGoDuration("2562047h") == hours(2562047));
  CHECK_FALSE(ParseGoDuration("2562048h").ok());  // beyond int64 nanoseconds
  CHECK_FALSE(ParseGoDuration("99999999999999999999s").ok());
  CHECK_FALSE(ParseGoDuration(".s").ok());
  CHECK_FALSE(ParseGoDuration("1s ").ok());
  CHECK_FALSE(ParseGoDuration("-").ok());
  absl::Status s = ParseGoDuration("5d").status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("\"5d\""));
}

TEST_CASE("FormatGoDuration: below a second and negative values as Go", "[duration]") {
  CHECK(FormatGoDuration(nanoseconds(999)) == "999ns");
  CHECK(FormatGoDuration(nanoseconds(1500)) == "1.5\xC2\xB5s");
  CHECK(FormatGoDuration(microseconds(1500)) == "1.5ms");
  CHECK(FormatGoDuration(milliseconds(-1500)) == "-1.5s");
  CHECK(FormatGoDuration(hours(2) + nanoseconds(1)) == "2h0m0.000000001s");
  CHECK(FormatGoDuration(seconds(3600)) == "1h0m0s");
}

}  // namespace
}  // namespace basalt
