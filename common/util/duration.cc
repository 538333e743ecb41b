#include "common/util/duration.h"

#include <cstdint>
#include <limits>

#include "fmt/format.h"

namespace basalt {
namespace {

constexpr uint64_t kMaxNanos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Nanoseconds per unit, 0 for an unknown unit.
uint64_t UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  // "µs" as U+00B5 (micro sign) or U+03BC (Greek mu), as Go accepts both.
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1'000;
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return 1'000'000'000;
  if (unit == "m") return 60'000'000'000;
  if (unit == "h") return 3'600'000'000'000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Appends `v` / 10^digits with `digits` decimals, trailing zeros (and a bare point) dropped.
void AppendFraction(std::string& out, uint64_t v, int digits) {
  uint64_t scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  out += fmt::format("{}", v / scale);
  std::string frac = fmt::format("{:0{}}", v % scale, digits);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  if (!frac.empty()) out += "." + frac;
}

}  // namespace

absl::StatusOr<std::chrono::nanoseconds> ParseGoDuration(std::string_view text) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        fmt::format("invalid duration \"{}\" (want e.g. 15s, 1m30s, 500ms)", text));
  };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return invalid();
  uint64_t total = 0;
  while (!s.empty()) {
    // The integer part, then an optional fraction; at least one digit in all.
    uint64_t whole = 0;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (whole > (kMaxNanos - (s[i] - '0')) / 10) return invalid();
      whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    bool digits = i > 0;
    uint64_t frac = 0;
    uint64_t frac_scale = 1;
    if (i < s.size() && s[i] == '.') {
      for (++i; i < s.size() && IsDigit(s[i]); ++i) {
        digits = true;
        // Digits beyond what can change the result are dropped, as Go does.
        if (frac_scale <= kMaxNanos / 10) {
          frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
          frac_scale *= 10;
        }
      }
    }
    if (!digits) return invalid();
    size_t j = i;
    while (j < s.size() && !IsDigit(s[j]) && s[j] != '.') ++j;
    const uint64_t unit = UnitNanos(s.substr(i, j - i));
    if (unit == 0) return invalid();
    s.remove_prefix(j);
    if (whole > kMaxNanos / unit) return invalid();
    uint64_t value = whole * unit;
    if (frac > 0) {
      // frac / frac_scale of a unit, in floating point as Go does (exact for the units above
      // and up to 15 significant digits).
      value += static_cast<uint64_t>(static_cast<double>(frac) *
                                     (static_cast<double>(unit) / static_cast<double>(frac_scale)));
      if (value > kMaxNanos) return invalid();
    }
    if (value > kMaxNanos - total) return invalid();
    total += value;
  }
  const auto ns = static_cast<int64_t>(total);
  return std::chrono::nanoseconds(negative ? -ns : ns);
}

std::string FormatGoDuration(std::chrono::nanoseconds d) {
  const int64_t n = d.count();
  if (n == 0) return "0s";
  std::string out = n < 0 ? "-" : "";
  const uint64_t u = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  if (u < 1'000) return out + fmt::format("{}ns", u);
  if (u < 1'000'000) {
    AppendFraction(out, u, 3);
    return out + "\xC2\xB5s";
  }
  if (u < 1'000'000'000) {
    AppendFraction(out, u, 6);
    return out + "ms";
  }
  const uint64_t hours = u / 3'600'000'000'000;
  const uint64_t minutes = u / 60'000'000'000 % 60;
  if (hours > 0) out += fmt::format("{}h", hours);
  if (hours > 0 || minutes > 0) out += fmt::format("{}m", minutes);
  AppendFraction(out, u % 60'000'000'000, 9);
  return out + "s";
}

}  // namespace basalt
