#include "common/resource/quantity.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "common/util/json.h"
#include "common/util/status.h"

namespace {

using basalt::MessageOf;
using basalt::resource::MustParse;
using basalt::resource::Quantity;
using Format = Quantity::Format;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

struct Row {
  const char* input;
  const char* canonical;
  int64_t milli;
  int64_t value;
  Format format;
};

// Expected values follow k8s.io/apimachinery resource.Quantity.
const Row kRows[] = {
    {"100m", "100m", 100, 1, Format::kDecimalSI},
    {"1.5", "1500m", 1500, 2, Format::kDecimalSI},
    {"2e3", "2e3", 2000000, 2000, Format::kDecimalExponent},
    {"2000", "2k", 2000000, 2000, Format::kDecimalSI},
    {"500Gi", "500Gi", 536870912000000, 536870912000, Format::kBinarySI},
    {"1Ki", "1Ki", 1024000, 1024, Format::kBinarySI},
    {"0.1", "100m", 100, 1, Format::kDecimalSI},
    {"-1", "-1", -1000, -1, Format::kDecimalSI},
    {"+1", "1", 1000, 1, Format::kDecimalSI},
    {"0", "0", 0, 0, Format::kDecimalSI},
    {"-0", "0", 0, 0, Format::kDecimalSI},
    {"0Gi", "0", 0, 0, Format::kBinarySI},
    {"1000m", "1", 1000, 1, Format::kDecimalSI},
    {"1024", "1024", 1024000, 1024, Format::kDecimalSI},
    {"1.5Gi", "1536Mi", 1610612736000, 1610612736, Format::kBinarySI},
    {"0.5Ki", "512", 512000, 512, Format::kBinarySI},
    {"1.1Ki", "1126400m", 1126400, 1127, Format::kBinarySI},
    {"64Gi", "64Gi", 68719476736000, 68719476736, Format::kBinarySI},
    {"100Mi", "100Mi", 104857600000, 104857600, Format::kBinarySI},
    {"7Ei", "7Ei", kMax, 8070450532247928832, Format::kBinarySI},
    {"1n", "1n", 1, 1, Format::kDecimalSI},
    {"1u", "1u", 1, 1, Format::kDecimalSI},
    {"0.0000000001", "1n", 1, 1, Format::kDecimalSI},  // rounds up to nano
    {"-0.0000000001", "-1n", -1, -1, Format::kDecimalSI},
    {"12e6", "12e6", 12000000000, 12000000, Format::kDecimalExponent},
    {"1.5e3", "1500", 1500000, 1500, Format::kDecimalExponent},
    {"1E3", "1e3", 1000000, 1000, Format::kDecimalExponent},
    {"1e-3", "1e-3", 1, 1, Format::kDecimalExponent},
    {"1e+3", "1e3", 1000000, 1000, Format::kDecimalExponent},
    {".5", "500m", 500, 1, Format::kDecimalSI},
    {"1.", "1", 1000, 1, Format::kDecimalSI},
    {"007", "7", 7000, 7, Format::kDecimalSI},
    {"1E", "1E", kMax, 1000000000000000000, Format::kDecimalSI},
    {"123456789", "123456789", 123456789000, 123456789, Format::kDecimalSI},
    {"1.000001k", "1000001m", 1000001, 1001, Format::kDecimalSI},
    {"1e30", "1e30", kMax, kMax, Format::kDecimalExponent},
    {"-1e30", "-1e30", kMin, kMin, Format::kDecimalExponent},
};

}  // namespace

TEST_CASE("Quantity: parses the Kubernetes edge-case table to canonical strings and values",
          "[quantity]") {
  for (const Row& row : kRows) {
    INFO("input " << row.input);
    auto q = Quantity::Parse(row.input);
    REQUIRE(q.ok());
    CHECK(q->String() == row.canonical);
    CHECK(q->MilliValue() == row.milli);
    CHECK(q->Value() == row.value);
    CHECK(q->format() == row.format);
    // The canonical form parses back to the same value.
    auto again = Quantity::Parse(q->String());
    REQUIRE(again.ok());
    CHECK(*again == *q);
    CHECK(again->String() == row.canonical);
  }
}

TEST_CASE("Quantity: 1.5 canonicalizes to 1500m", "[quantity]") {
  CHECK(MustParse("1.5").String() == "1500m");
  CHECK(MustParse("1.5").MilliValue() == 1500);
}

TEST_CASE("Quantity: 2000 canonicalizes to 2k but 2e3 keeps its exponent form", "[quantity]") {
  CHECK(MustParse("2000").String() == "2k");
  CHECK(MustParse("2e3").String() == "2e3");
  CHECK(MustParse("2000") == MustParse("2e3"));
}

TEST_CASE("Quantity: binary values are capped at 2^63-1 like Kubernetes", "[quantity]") {
  CHECK(MustParse("8Ei").String() == "9223372036854775807");
  CHECK(MustParse("16Ei").Value() == kMax);
  CHECK(MustParse("99999999999999999999999999999999999999999999Ki").Value() == kMax);
  CHECK(MustParse("-16Ei").String() == "-9223372036854775807");
}

TEST_CASE("Quantity: huge decimal values stay exact without overflow", "[quantity]") {
  Quantity big = MustParse("1e30");
  Quantity sum = big + MustParse("1");
  CHECK(sum > big);
  CHECK(sum.String() == "1000000000000000000000000000001");
  CHECK((sum - big) == MustParse("1"));
  CHECK(MustParse("1e1000").String() == "10e999");  // exponents are multiples of 3
  CHECK(MustParse("1e1000") > MustParse("9e999"));
  CHECK(MustParse("-1e1000") < MustParse("-9e999"));
  // Beyond 38 significant digits, sums round away from zero instead of wrapping.
  Quantity rounded = MustParse("1e40") + MustParse("1");
  CHECK(rounded > MustParse("1e40"));
  CHECK(MustParse("1e40") - MustParse("1") < MustParse("1e40"));
  // Decimal SI beyond the E suffix keeps its value (Kubernetes would drop the suffix).
  CHECK(MustParse("1000E").String() == "1000E");
  CHECK(MustParse("1000E") == MustParse("1e21"));
}

TEST_CASE("Quantity: malformed input is rejected with the input and rule named", "[quantity]") {
  struct Bad {
    const char* input;
    const char* fragment;
  };
  const Bad bad[] = {
      {"", "empty string"},
      {"1.2.3", "unknown suffix \".3\""},
      {"5ZZ", "unknown suffix \"ZZ\""},
      {"+-1", "expected digits"},
      {"-", "expected digits"},
      {".", "expected digits"},
      {"e3", "expected digits"},
      {"1K", "unknown suffix \"K\""},
      {"1Kib", "unknown suffix \"Kib\""},
      {"1e", "unknown suffix \"e\""},
      {"1e3.5", "unknown suffix \"e3.5\""},
      {" 1", "expected digits"},
      {"1 ", "unknown suffix \" \""},
      {"1e1000000", "exponent \"e1000000\" is out of range"},
      {"12345678901234567890123456789012345678901", "significant digits"},
  };
  for (const Bad& b : bad) {
    INFO("input \"" << b.input << "\"");
    auto q = Quantity::Parse(b.input);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == absl::StatusCode::kInvalidArgument);
    const std::string msg(MessageOf(q.status()));
    CHECK(msg.find(std::string("\"") + b.input) != std::string::npos);
    CHECK(msg.find(b.fragment) != std::string::npos);
  }
}

TEST_CASE("Quantity: Value and MilliValue round away from zero", "[quantity]") {
  CHECK(MustParse("1.5").Value() == 2);
  CHECK(MustParse("-1.5").Value() == -2);
  CHECK(MustParse("1n").MilliValue() == 1);
  CHECK(MustParse("-1n").MilliValue() == -1);
  CHECK(MustParse("2.000").Value() == 2);
  CHECK(MustParse("1Gi").ScaledValue(6) == 1074);  // 1073.741824 MB rounded up
}

TEST_CASE("Quantity: addition and subtraction are exact across formats", "[quantity]") {
  CHECK((MustParse("100m") + MustParse("1.5")).String() == "1600m");
  CHECK((MustParse("1Gi") + MustParse("512Mi")).String() == "1536Mi");
  CHECK((MustParse("1") - MustParse("1500m")).String() == "-500m");
  CHECK((MustParse("0.1") + MustParse("0.2")) == MustParse("300m"));
  CHECK((MustParse("1Ki") - MustParse("1Ki")).IsZero());
  CHECK(MustParse("3").Neg().String() == "-3");
  Quantity acc;
  for (int i = 0; i < 10; ++i) acc += MustParse("100m");
  CHECK(acc == MustParse("1"));
  CHECK(acc.String() == "1");
}

TEST_CASE("Quantity: the result of an addition to zero takes the other operand's format",
          "[quantity]") {
  Quantity sum = Quantity() + MustParse("1Gi");
  CHECK(sum.format() == Format::kBinarySI);
  CHECK(sum.String() == "1Gi");
  Quantity diff = Quantity() - MustParse("1Gi");
  CHECK(diff.String() == "-1Gi");
  // Otherwise the left operand's format wins.
  CHECK((MustParse("1") + MustParse("1Ki")).String() == "1025");
  CHECK((MustParse("1Ki") + MustParse("1Ki")).String() == "2Ki");
}

TEST_CASE("Quantity: comparison is numeric and ignores the format", "[quantity]") {
  CHECK(MustParse("1Ki") == MustParse("1024"));
  CHECK(MustParse("1k") < MustParse("1Ki"));
  CHECK(MustParse("999m") < MustParse("1"));
  CHECK(MustParse("-1") < MustParse("0"));
  CHECK(MustParse("-2") < MustParse("-1"));
  CHECK(MustParse("1n") > MustParse("0"));
  CHECK(MustParse("1.000000001") > MustParse("1"));
  CHECK(MustParse("1E") > MustParse("999P"));
}

TEST_CASE("Quantity: MulInt multiplies exactly", "[quantity]") {
  CHECK(MustParse("500m").MulInt(4).String() == "2");
  CHECK(MustParse("64Gi").MulInt(4).String() == "256Gi");
  CHECK(MustParse("1").MulInt(-3).String() == "-3");
  CHECK(MustParse("1").MulInt(0).IsZero());
  CHECK(MustParse("1e37").MulInt(kMax) > MustParse("9e55"));  // rounds instead of wrapping
}

TEST_CASE("Quantity: constructors produce canonical values", "[quantity]") {
  CHECK(Quantity::FromInt(3).String() == "3");
  CHECK(Quantity::FromInt(1024, Format::kBinarySI).String() == "1Ki");
  CHECK(Quantity::FromMilli(1500).String() == "1500m");
  CHECK(Quantity::FromMilli(kMin).MilliValue() == kMin);
  CHECK(Quantity::FromInt(kMin).Value() == kMin);
  CHECK(Quantity::FromScaled(5, -12).String() == "1n");
  CHECK(Quantity::FromScaled(15, 8).String() == "1500M");
}

TEST_CASE("Quantity: JSON strings and numbers both parse", "[quantity]") {
  auto doc = basalt::json::Parse(R"({"a":"500m","b":8,"c":0.5,"d":1e30,"e":true,"f":"x"})");
  REQUIRE(doc.ok());
  auto get = [&](const char* k) { return Quantity::FromJson(*basalt::json::Find(*doc, k)); };
  CHECK(get("a")->String() == "500m");
  CHECK(get("b")->String() == "8");
  CHECK(get("c")->String() == "500m");
  CHECK(get("d")->String() == "1e30");
  CHECK_FALSE(get("e").ok());
  CHECK(MessageOf(get("f").status()).find("\"x\"") != std::string_view::npos);
}

namespace {

// value in nano units, exact for the ranges used below.
absl::int128 Nanos(const Quantity& q) {
  absl::int128 v = q.mantissa();
  for (int32_t e = q.exponent(); e > -9; --e) v *= 10;
  return v;
}

}  // namespace

TEST_CASE("Quantity: random sums, differences and comparisons match exact integer arithmetic",
          "[quantity]") {
  std::mt19937_64 rng(20240501);
  std::uniform_int_distribution<int64_t> mantissa(-999'999'999, 999'999'999);
  std::uniform_int_distribution<int32_t> exponent(-9, 9);
  std::uniform_int_distribution<int> format(0, 2);
  for (int i = 0; i < 5000; ++i) {
    const auto fa = static_cast<Format>(format(rng));
    Quantity a = Quantity::FromScaled(mantissa(rng), exponent(rng), fa);
    Quantity b = Quantity::FromScaled(mantissa(rng), exponent(rng));
    INFO(a.String() << " and " << b.String());
    CHECK(Nanos(a + b) == Nanos(a) + Nanos(b));
    CHECK(Nanos(a - b) == Nanos(a) - Nanos(b));
    CHECK(Nanos(a.MulInt(7)) == Nanos(a) * 7);
    CHECK((a < b) == (Nanos(a) < Nanos(b)));
    CHECK((a == b) == (Nanos(a) == Nanos(b)));
    // The canonical string parses back to the same value.
    auto back = Quantity::Parse(a.String());
    REQUIRE(back.ok());
    CHECK(Nanos(*back) == Nanos(a));
  }
}

TEST_CASE("Quantity: fmt prints the canonical string and doubles approximate for scores",
          "[quantity]") {
  CHECK(fmt::format("{} of {}", MustParse("1.5"), MustParse("1536Mi")) == "1500m of 1536Mi");
  CHECK(MustParse("1500m").AsApproximateDouble() == Approx(1.5));
  CHECK(MustParse("-2Ki").AsApproximateDouble() == Approx(-2048.0));
  CHECK(Quantity().AsApproximateDouble() == 0.0);
}

TEST_CASE("Quantity: a value whose canonical exponent could not be parsed back is rejected",
          "[quantity]") {
  // Fuzzer reproducer: 9e100012 parsed, and its canonical "90e100011" did not.
  auto huge = Quantity::Parse("9000000000000e+100000");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(MessageOf(huge.status())).find("too large") != std::string::npos);
  // The largest exponents that are accepted print and parse back.
  for (const char* text : {"1e100000", "-999e99998", "12.5e99999", "1e-100000"}) {
    INFO(text);
    Quantity q = MustParse(text);
    auto back = Quantity::Parse(q.String());
    REQUIRE(back.ok());
    CHECK(*back == q);
    CHECK(back->String() == q.String());
  }
}

TEST_CASE("Quantity: sums too long for the E form print in exponent form with the same value",
          "[quantity]") {
  const std::string big = "1" + std::string(254, '0') + "E";  // 256 characters
  Quantity q = MustParse(big);
  CHECK(q.String() == big);
  Quantity sum = q.MulInt(10);
  const std::string s = sum.String();
  CHECK(s.size() <= 256);
  auto back = Quantity::Parse(s);
  REQUIRE(back.ok());
  CHECK(*back == sum);
}

namespace {

// A random string of the quantity grammar, biased towards edges: long digit runs, exponents
// near the limits, every suffix.
std::string RandomQuantityText(std::mt19937_64& rng) {
  static constexpr const char* kSuffixes[] = {"",  "n", "u",  "m",  "k",  "M",  "G",  "T",
                                              "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + pick(0, 9)));
    return d;
  };
  std::string s;
  switch (pick(0, 3)) {
    case 0:
      s += '-';
      break;
    case 1:
      s += '+';
      break;
    default:
      break;
  }
  const int lengths[] = {0, 1, 3, 13, 19, 38, 45};
  s += digits(lengths[pick(0, 6)]);
  if (pick(0, 1) == 1) {
    s += '.';
    s += digits(lengths[pick(0, 6)]);
  }
  if (pick(0, 2) != 0) {
    s += kSuffixes[pick(0, 15)];
  } else {
    s += pick(0, 1) == 0 ? "e" : "E";
    const int sign = pick(0, 2);
    if (sign == 1) s += '-';
    if (sign == 2) s += '+';
    const int edges[] = {0, 1, 17, 18, 19, 37, 99950, 99999, 100000, 100001};
    s += std::to_string(pick(0, 1) == 0 ? edges[pick(0, 9)] : pick(0, 100000));
  }
  return s;
}

}  // namespace

TEST_CASE("Quantity: every string that parses prints a canonical form that parses back",
          "[quantity]") {
  std::mt19937_64 rng(110005);
  int parsed = 0;
  for (int i = 0; i < 50000; ++i) {
    const std::string text = RandomQuantityText(rng);
    auto q = Quantity::Parse(text);
    if (!q.ok()) continue;
    ++parsed;
    INFO("input \"" << text << "\" canonical \"" << q->String() << "\"");
    auto back = Quantity::Parse(q->String());
    REQUIRE(back.ok());
    CHECK(*back == *q);
    CHECK(back->String() == q->String());
  }
  CHECK(parsed > 10000);  // the generator exercises the parser, not just its errors
}
