#include "common/resource/quantity.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::resource {
namespace {

using absl::int128;
using absl::uint128;

constexpr int kMaxDigits = 38;
constexpr int32_t kNanoExponent = -9;
// Limit of an exponent written in the input ("e100000") and of the exponent of the parsed
// value (mantissa * 10^exponent with no trailing zeros in the mantissa). String() never prints
// an exponent above the value's own, so limiting the value keeps every canonical string
// parseable: "9000000000000e+100000" (9e100012) is rejected instead of printing "90e100011".
constexpr int32_t kMaxSuffixExponent = 100000;
constexpr int32_t kMaxValueExponent = kMaxSuffixExponent;
constexpr size_t kMaxInputLength = 256;

// 10^0 .. 10^38; all fit in uint128 (10^38 < 2^127).
std::array<uint128, kMaxDigits + 1> MakePow10Table() {
  std::array<uint128, kMaxDigits + 1> t{};
  uint128 v = 1;
  for (int i = 0; i <= kMaxDigits; ++i) {
    t[i] = v;
    v *= 10;
  }
  return t;
}
const std::array<uint128, kMaxDigits + 1> kPow10 = MakePow10Table();
const uint128 kMaxMantissa = kPow10[kMaxDigits] - 1;
const uint128 kInt64Max = static_cast<uint128>(std::numeric_limits<int64_t>::max());

int Digits(uint128 v) {
  int d = 1;
  while (d <= kMaxDigits && v >= kPow10[d]) ++d;
  return d;
}

uint128 Magnitude(int128 v) {
  // |v| never overflows: mantissas stay below 10^38 < 2^127.
  return v < 0 ? static_cast<uint128>(-v) : static_cast<uint128>(v);
}

int128 Signed(uint128 mag, bool negative) {
  int128 v = static_cast<int128>(mag);
  return negative ? -v : v;
}

// ceil(v / 10^k) for v > 0; any k >= 0.
uint128 DivPow10RoundUp(uint128 v, int64_t k) {
  if (k == 0 || v == 0) return v;
  if (k > kMaxDigits) return 1;
  uint128 q = v / kPow10[k];
  if (q * kPow10[k] != v) ++q;
  return q;
}

// Rounds `mag` (away from zero) until it has at most 38 digits, raising `exp` accordingly.
void FitMagnitude(uint128& mag, int32_t& exp) {
  while (mag > kMaxMantissa) {
    mag = DivPow10RoundUp(mag, 1);
    ++exp;
  }
}

std::string ToDecimalString(uint128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

struct Suffix {
  int base = 10;  // 10 or 2
  int32_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

absl::StatusOr<Suffix> InterpretSuffix(std::string_view input, std::string_view s) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view name;
    Suffix suffix;
  };
  static constexpr Entry kTable[] = {
      {"", {10, 0, F::kDecimalSI}},   {"n", {10, -9, F::kDecimalSI}},
      {"u", {10, -6, F::kDecimalSI}}, {"m", {10, -3, F::kDecimalSI}},
      {"k", {10, 3, F::kDecimalSI}},  {"M", {10, 6, F::kDecimalSI}},
      {"G", {10, 9, F::kDecimalSI}},  {"T", {10, 12, F::kDecimalSI}},
      {"P", {10, 15, F::kDecimalSI}}, {"E", {10, 18, F::kDecimalSI}},
      {"Ki", {2, 10, F::kBinarySI}},  {"Mi", {2, 20, F::kBinarySI}},
      {"Gi", {2, 30, F::kBinarySI}},  {"Ti", {2, 40, F::kBinarySI}},
      {"Pi", {2, 50, F::kBinarySI}},  {"Ei", {2, 60, F::kBinarySI}},
  };
  for (const Entry& e : kTable) {
    if (e.name == s) return e.suffix;
  }
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view rest = s.substr(1);
    bool negative = false;
    if (rest[0] == '+' || rest[0] == '-') {
      negative = rest[0] == '-';
      rest.remove_prefix(1);
    }
    if (!rest.empty() && std::all_of(rest.begin(), rest.end(), IsDigit)) {
      int64_t e = 0;
      for (char c : rest) {
        e = e * 10 + (c - '0');
        if (e > kMaxSuffixExponent) {
          return absl::InvalidArgumentError(
              fmt::format("invalid quantity \"{}\": exponent \"{}\" is out of range (at most {})",
                          input, s, kMaxSuffixExponent));
        }
      }
      return Suffix{10, static_cast<int32_t>(negative ? -e : e), F::kDecimalExponent};
    }
  }
  return absl::InvalidArgumentError(fmt::format(
      "invalid quantity \"{}\": unknown suffix \"{}\" (want one of n, u, m, k, M, G, T, P, E, "
      "Ki, Mi, Gi, Ti, Pi, Ei, or an exponent like e3)",
      input, s));
}

// Multiplies a decimal digit string by 2 in place.
void DoubleDigits(std::string& d) {
  int carry = 0;
  for (size_t i = d.size(); i-- > 0;) {
    int v = (d[i] - '0') * 2 + carry;
    d[i] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  if (carry != 0) d.insert(d.begin(), static_cast<char>('0' + carry));
}

// Moves trailing zeros of `d` into `exp`.
void StripTrailingZeros(std::string& d, int64_t& exp) {
  while (d.size() > 1 && d.back() == '0') {
    d.pop_back();
    ++exp;
  }
}

// Rounds the non-zero value d * 10^exp (d without leading or trailing zeros) up to nano
// precision and converts it to a mantissa. Returns false if more than 38 digits remain.
bool RoundToNano(std::string d, int64_t exp, uint128& mag, int32_t& out_exp) {
  if (exp < kNanoExponent) {
    const int64_t drop = kNanoExponent - exp;
    if (drop >= static_cast<int64_t>(d.size())) {
      mag = 1;  // a positive amount smaller than 1n rounds up to 1n
      out_exp = kNanoExponent;
      return true;
    }
    // Trailing zeros were stripped, so the dropped tail is non-zero: round up.
    d.resize(d.size() - static_cast<size_t>(drop));
    if (static_cast<int>(d.size()) > kMaxDigits) return false;
    mag = 0;
    for (char c : d) mag = mag * 10 + static_cast<unsigned>(c - '0');
    mag += 1;
    out_exp = kNanoExponent;
    FitMagnitude(mag, out_exp);
    return true;
  }
  if (static_cast<int>(d.size()) > kMaxDigits) return false;
  mag = 0;
  for (char c : d) mag = mag * 10 + static_cast<unsigned>(c - '0');
  out_exp = static_cast<int32_t>(exp);
  return true;
}

}  // namespace

std::string_view FormatName(Quantity::Format f) {
  switch (f) {
    case Quantity::Format::kDecimalSI:
      return "DecimalSI";
    case Quantity::Format::kBinarySI:
      return "BinarySI";
    case Quantity::Format::kDecimalExponent:
      return "DecimalExponent";
  }
  return "Unknown";
}

Quantity Quantity::Make(int128 mantissa, int32_t exponent, Format format) {
  Quantity q;
  q.format_ = format;
  if (mantissa == 0) return q;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  q.mantissa_ = mantissa;
  q.exponent_ = exponent;
  return q;
}

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "invalid quantity \"\": empty string (want a number with an optional suffix, e.g. "
        "500m, 1.5, 64Gi)");
  }
  if (text.size() > kMaxInputLength) {
    return absl::InvalidArgumentError(
        fmt::format("invalid quantity \"{}...\": longer than {} characters", text.substr(0, 32),
                    kMaxInputLength));
  }
  size_t pos = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    pos = 1;
  }
  const size_t int_start = pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  std::string_view int_part = text.substr(int_start, pos - int_start);
  std::string_view frac_part;
  if (pos < text.size() && text[pos] == '.') {
    const size_t frac_start = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    frac_part = text.substr(frac_start, pos - frac_start);
  }
  if (int_part.empty() && frac_part.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "invalid quantity \"{}\": expected digits after the optional sign (want a number with "
        "an optional suffix, e.g. 500m, 1.5, 64Gi)",
        text));
  }
  std::string_view suffix_text = text.substr(pos);
  BASALT_ASSIGN_OR_RETURN(Suffix suffix, InterpretSuffix(text, suffix_text));

  // Significant digits without leading zeros; value = digits * 10^exp.
  std::string digits;
  digits.reserve(int_part.size() + frac_part.size());
  digits.append(int_part);
  digits.append(frac_part);
  const size_t first_nonzero = digits.find_first_not_of('0');
  if (first_nonzero == std::string::npos) {
    Quantity zero;
    zero.format_ = suffix.format;
    return zero;
  }
  digits.erase(0, first_nonzero);
  int64_t exp = -static_cast<int64_t>(frac_part.size());

  Format format = suffix.format;
  if (suffix.base == 10) {
    exp += suffix.exponent;
  } else {
    for (int i = 0; i < suffix.exponent; ++i) DoubleDigits(digits);
  }
  StripTrailingZeros(digits, exp);

  uint128 mag = 0;
  int32_t mexp = 0;
  if (suffix.base == 2) {
    // Binary SI is capped at 2^63-1 like Kubernetes does.
    const int64_t integer_digits = static_cast<int64_t>(digits.size()) + exp;
    bool over = integer_digits > 19;
    if (!over) {
      if (!RoundToNano(digits, exp, mag, mexp)) over = true;  // cannot happen below 10^19
    }
    if (!over) {
      over = mexp >= 0 ? mag * kPow10[mexp] > kInt64Max : mag > kInt64Max * kPow10[-mexp];
    }
    if (over) {
      mag = kInt64Max;
      mexp = 0;
    }
    // Below one unit the binary form makes no sense; Kubernetes switches to DecimalSI.
    if (mexp < 0 && Digits(mag) + mexp <= 0) format = Format::kDecimalSI;
  } else if (!RoundToNano(digits, exp, mag, mexp)) {
    return absl::InvalidArgumentError(
        fmt::format("invalid quantity \"{}\": more than {} significant digits at nano precision",
                    text, kMaxDigits));
  }
  Quantity q = Make(Signed(mag, negative), mexp, format);
  if (q.exponent_ > kMaxValueExponent) {
    return absl::InvalidArgumentError(fmt::format(
        "invalid quantity \"{}\": too large (it is {}e{}; the exponent of the last significant "
        "digit may be at most {})",
        text, ToDecimalString(Magnitude(q.mantissa_)), q.exponent_, kMaxValueExponent));
  }
  return q;
}

absl::StatusOr<Quantity> Quantity::FromJson(const rapidjson::Value& v) {
  if (v.IsString()) return Parse(std::string_view(v.GetString(), v.GetStringLength()));
  if (v.IsInt64()) return FromInt(v.GetInt64());
  if (v.IsUint64()) return Parse(fmt::format("{}", v.GetUint64()));
  if (v.IsDouble()) {
    const double d = v.GetDouble();
    if (!std::isfinite(d)) {
      return absl::InvalidArgumentError("invalid quantity: JSON number is not finite");
    }
    return Parse(fmt::format("{}", d));
  }
  return absl::InvalidArgumentError(
      "invalid quantity: want a JSON string like \"500m\" or a number");
}

Quantity Quantity::FromInt(int64_t value, Format format) { return Make(value, 0, format); }

Quantity Quantity::FromMilli(int64_t milli, Format format) { return Make(milli, -3, format); }

Quantity Quantity::FromScaled(int64_t mantissa, int32_t exponent, Format format) {
  if (mantissa == 0) return Make(0, 0, format);
  if (exponent < kNanoExponent) {
    const bool negative = mantissa < 0;
    uint128 mag = DivPow10RoundUp(Magnitude(mantissa), int64_t{kNanoExponent} - exponent);
    return Make(Signed(mag, negative), kNanoExponent, format);
  }
  return Make(mantissa, exponent, format);
}

Quantity MustParse(std::string_view text) {
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    std::fprintf(stderr, "MustParse(%.*s): %.*s\n", static_cast<int>(text.size()), text.data(),
                 static_cast<int>(MessageOf(q.status()).size()), MessageOf(q.status()).data());
    std::abort();
  }
  return *q;
}

int64_t Quantity::ScaledValue(int32_t scale) const {
  if (mantissa_ == 0) return 0;
  const bool negative = mantissa_ < 0;
  const uint128 limit = negative ? kInt64Max + 1 : kInt64Max;
  const uint128 mag = Magnitude(mantissa_);
  const int64_t shift = int64_t{exponent_} - scale;
  uint128 result;
  if (shift >= 0) {
    if (Digits(mag) + shift > 19) {
      result = limit;
    } else {
      result = mag * kPow10[shift];
    }
  } else {
    result = DivPow10RoundUp(mag, -shift);
  }
  if (result > limit) result = limit;
  if (negative) {
    return result == kInt64Max + 1 ? std::numeric_limits<int64_t>::min()
                                   : -static_cast<int64_t>(result);
  }
  return static_cast<int64_t>(result);
}

double Quantity::AsApproximateDouble() const {
  if (mantissa_ == 0) return 0.0;
  return static_cast<double>(mantissa_) * std::pow(10.0, static_cast<double>(exponent_));
}

Quantity Quantity::Neg() const {
  Quantity q = *this;
  q.mantissa_ = -mantissa_;
  return q;
}

Quantity Quantity::Add(const Quantity& other) const {
  const Format format = IsZero() ? other.format_ : format_;
  if (other.IsZero()) {
    Quantity q = *this;
    q.format_ = format;
    return q;
  }
  if (IsZero()) {
    Quantity q = other;
    q.format_ = format;
    return q;
  }
  // Align both operands on a common exponent t, as low as 38 digits allow.
  const uint128 ma = Magnitude(mantissa_);
  const uint128 mb = Magnitude(other.mantissa_);
  int64_t t = std::min(exponent_, other.exponent_);
  const int64_t need = std::max(Digits(ma) + (exponent_ - t), Digits(mb) + (other.exponent_ - t));
  if (need > kMaxDigits) t += need - kMaxDigits;  // precision loss: rounds away from zero
  auto align = [t](uint128 m, int32_t e) {
    return e >= t ? m * kPow10[e - t] : DivPow10RoundUp(m, t - e);
  };
  const uint128 a = align(ma, exponent_);
  const uint128 b = align(mb, other.exponent_);
  const bool neg_a = mantissa_ < 0;
  const bool neg_b = other.mantissa_ < 0;
  uint128 mag;
  bool negative;
  if (neg_a == neg_b) {
    mag = a + b;  // < 2 * 10^38 < 2^128
    negative = neg_a;
  } else if (a >= b) {
    mag = a - b;
    negative = neg_a;
  } else {
    mag = b - a;
    negative = neg_b;
  }
  int32_t exp = static_cast<int32_t>(t);
  FitMagnitude(mag, exp);
  return Make(Signed(mag, negative), mag == 0 ? 0 : exp, format);
}

Quantity Quantity::Sub(const Quantity& other) const {
  Quantity q = Add(other.Neg());
  if (IsZero()) q.format_ = other.format_;
  return q;
}

Quantity Quantity::MulInt(int64_t n) const {
  if (n == 0 || mantissa_ == 0) return Make(0, 0, format_);
  const bool negative = (mantissa_ < 0) != (n < 0);
  const uint128 factor =
      n < 0 ? static_cast<uint128>(-(static_cast<int128>(n))) : static_cast<uint128>(n);
  uint128 mag = Magnitude(mantissa_);
  int32_t exp = exponent_;
  while (mag > kMaxMantissa / factor) {  // precision loss only beyond 38 digits
    mag = DivPow10RoundUp(mag, 1);
    ++exp;
  }
  return Make(Signed(mag * factor, negative), exp, format_);
}

int Quantity::Cmp(const Quantity& other) const {
  const int sa = Sign();
  const int sb = other.Sign();
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  const uint128 ma = Magnitude(mantissa_);
  const uint128 mb = Magnitude(other.mantissa_);
  // Position of the most significant digit decides first.
  const int64_t pa = Digits(ma) + int64_t{exponent_};
  const int64_t pb = Digits(mb) + int64_t{other.exponent_};
  int mag_cmp;
  if (pa != pb) {
    mag_cmp = pa < pb ? -1 : 1;
  } else {
    const int32_t t = std::min(exponent_, other.exponent_);
    const uint128 a = ma * kPow10[exponent_ - t];  // fits: same leading position
    const uint128 b = mb * kPow10[other.exponent_ - t];
    mag_cmp = a < b ? -1 : (a > b ? 1 : 0);
  }
  return sa > 0 ? mag_cmp : -mag_cmp;
}

std::string Quantity::String() const {
  if (mantissa_ == 0) return "0";
  const bool negative = mantissa_ < 0;
  const uint128 mag = Magnitude(mantissa_);
  std::string out = negative ? "-" : "";
  Format format = format_;
  if (format == Format::kBinarySI) {
    // Integral values of at least 1024 in magnitude print in powers of 1024.
    const bool integral = exponent_ >= 0 && Digits(mag) + exponent_ <= kMaxDigits;
    const uint128 value = integral ? mag * kPow10[exponent_] : 0;
    if (!integral || value < 1024) {
      format = Format::kDecimalSI;
    } else {
      static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      uint128 v = value;
      int power = 0;
      while (power < 6 && v % 1024 == 0) {
        v /= 1024;
        ++power;
      }
      out += ToDecimalString(v);
      out += kBinary[power];
      return out;
    }
  }
  // Decimal: lower the exponent to a multiple of three so no fractional digit is needed.
  std::string digits = ToDecimalString(mag);
  int64_t exp = exponent_;
  const int64_t rem = ((exp % 3) + 3) % 3;
  digits.append(static_cast<size_t>(rem), '0');
  exp -= rem;
  out += digits;
  if (format == Format::kDecimalExponent) {
    if (exp != 0) out += fmt::format("e{}", exp);
    return out;
  }
  if (exp > 18) {
    // Past "E" the value is padded with zeros. Sums and products of parsed values can get
    // longer than Parse accepts; those print in exponent form (same value) instead.
    const size_t zeros = static_cast<size_t>(exp - 18);
    if (out.size() + zeros + 1 > kMaxInputLength) {
      out += fmt::format("e{}", exp);
      return out;
    }
    out.append(zeros, '0');
    exp = 18;
  }
  static constexpr std::string_view kDecimal[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  out += kDecimal[(exp + 9) / 3];
  return out;
}

}  // namespace basalt::resource
