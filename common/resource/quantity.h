#pragma once
// Quantity is an exact fixed-point number with the parsing and canonical formatting rules
// of Kubernetes resource quantities ("500m", "1.5", "64Gi", "2e3", "1k").
//
// Representation: value = mantissa * 10^exponent, with a signed 128-bit mantissa of at most
// 38 decimal digits and exponent >= -9 (nano units, the finest precision Kubernetes keeps).
// Every quantity with at most 38 significant digits is exact: in particular every value with
// |value| < 1e29 at nano precision, and huge values like 1e30 or 1e1000. Arithmetic whose
// exact result would need more than 38 significant digits rounds away from zero in the lowest
// kept digit (never silently wraps); realistic cluster totals never get there. No floating
// point is used except in AsApproximateDouble (for scores) and to read a JSON number that
// was not an integer.
//
// Like Kubernetes, a parsed quantity remembers its suffix family (Format) and is printed in
// canonical form in that family: "1.5" -> "1500m", "1.5Gi" -> "1536Mi", "2000" -> "2k",
// "2e3" -> "2e3". Comparison and equality are numeric and ignore the format.
//
// Quantity is a small value type (32 bytes); copy freely. Thread-compatible.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "rapidjson/document.h"

namespace basalt::resource {

class Quantity {
 public:
  // The suffix family a quantity is printed in.
  enum class Format : uint8_t {
    kDecimalSI,        // 500m, 2k, 64G (also plain numbers)
    kBinarySI,         // 1Ki, 64Gi
    kDecimalExponent,  // 2e3, 1E-3
  };

  // Zero, DecimalSI.
  constexpr Quantity() = default;

  // Parses a Kubernetes quantity string:
  //   [+-] digits [. digits] [suffix]   with suffix one of n u m "" k M G T P E (decimal SI),
  //   Ki Mi Gi Ti Pi Ei (binary SI) or e<int> / E<int> (decimal exponent).
  // As in Kubernetes, non-zero values are rounded up (away from zero) to nano precision and
  // binary-SI values are capped at 2^63-1. Deliberately stricter than Kubernetes: a number
  // without any digit ("", "-", ".") is rejected rather than read as 0, and decimal exponents
  // are limited to |e| <= 100000, so is the exponent of the value's last significant digit
  // (Kubernetes reads the exponent as an int64 and truncates it to int32), and a decimal value
  // needing more than 38 significant digits at nano precision is rejected (Kubernetes would
  // keep it in arbitrary precision). Errors are kInvalidArgument and name the input and the
  // rule. For every quantity Parse returns, Parse(q.String()) returns an equal quantity whose
  // String() is the same string.
  static absl::StatusOr<Quantity> Parse(std::string_view text);

  // Reads a quantity from JSON: a string (parsed as above) or a number (8 -> "8", 0.5 ->
  // "500m"). Integers are exact; a non-integer JSON number is read through its shortest
  // round-trip decimal form.
  static absl::StatusOr<Quantity> FromJson(const rapidjson::Value& v);

  // value (whole units), e.g. FromInt(3) == "3", FromInt(1024, kBinarySI) == "1Ki".
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  // value / 1000, e.g. FromMilli(1500) == "1500m".
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);
  // mantissa * 10^exponent (rounded up to nano precision when exponent < -9).
  static Quantity FromScaled(int64_t mantissa, int32_t exponent,
                             Format format = Format::kDecimalSI);

  // Canonical Kubernetes string: zero is "0"; otherwise the largest suffix that needs no
  // fractional digits. Binary-SI values below 1024 in magnitude or with a fractional part are
  // printed as decimal SI, as Kubernetes does. Deliberate difference: decimal-SI values past
  // the "E" suffix print as "<digits>E" (Kubernetes drops the suffix there, changing the value),
  // or as "<digits>e<exponent>" when that would be longer than Parse accepts (256 characters;
  // only sums and products of huge values get there).
  std::string String() const;

  // The value in units (Value) or thousandths (MilliValue), rounded away from zero as
  // Kubernetes does (0.1 -> Value() == 1; 1n -> MilliValue() == 1), saturated to the int64
  // range for huge values.
  int64_t Value() const { return ScaledValue(0); }
  int64_t MilliValue() const { return ScaledValue(-3); }
  // The value in units of 10^scale, rounded away from zero and saturated.
  int64_t ScaledValue(int32_t scale) const;
  // An approximation for scores and shares (DRF, binpack); never use it for fit checks.
  double AsApproximateDouble() const;

  Format format() const { return format_; }
  void set_format(Format f) { format_ = f; }

  bool IsZero() const { return mantissa_ == 0; }
  // -1, 0 or 1.
  int Sign() const { return mantissa_ < 0 ? -1 : (mantissa_ > 0 ? 1 : 0); }

  // Arithmetic. The result keeps this quantity's format, or takes `other`'s when this is
  // zero (as Kubernetes' Add/Sub do).
  Quantity Add(const Quantity& other) const;
  Quantity Sub(const Quantity& other) const;
  Quantity Neg() const;
  // this * n (e.g. replicas * per-pod request).
  Quantity MulInt(int64_t n) const;
  Quantity& operator+=(const Quantity& o) { return *this = Add(o); }
  Quantity& operator-=(const Quantity& o) { return *this = Sub(o); }
  friend Quantity operator+(const Quantity& a, const Quantity& b) { return a.Add(b); }
  friend Quantity operator-(const Quantity& a, const Quantity& b) { return a.Sub(b); }
  friend Quantity operator-(const Quantity& a) { return a.Neg(); }

  // Numeric comparison: -1, 0, 1. Exact for all representable values.
  int Cmp(const Quantity& other) const;
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.Cmp(b) == 0; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.Cmp(b) <=> 0;
  }

  // The raw decimal representation (for tests and diagnostics).
  absl::int128 mantissa() const { return mantissa_; }
  int32_t exponent() const { return exponent_; }

 private:
  // Builds a normalized quantity from mantissa * 10^exponent where |mantissa| < 10^38 and
  // exponent >= -9.
  static Quantity Make(absl::int128 mantissa, int32_t exponent, Format format);

  absl::int128 mantissa_ = 0;  // no trailing decimal zeros; 0 only with exponent_ == 0
  int32_t exponent_ = 0;       // >= -9
  Format format_ = Format::kDecimalSI;
};

// Short name for formats, for messages: "DecimalSI", "BinarySI", "DecimalExponent".
std::string_view FormatName(Quantity::Format f);

// Parses or aborts; for literals in tests and tables, never for input.
Quantity MustParse(std::string_view text);

}  // namespace basalt::resource

// fmt::format("{}", q) prints q.String().
template <>
struct fmt::formatter<basalt::resource::Quantity> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const basalt::resource::Quantity& q, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(q.String(), ctx);
  }
};
