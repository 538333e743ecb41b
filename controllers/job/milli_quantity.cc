#include "controllers/job/milli_quantity.h"

#include <limits>

#include "absl/numeric/int128.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr int kMaxDigits = 30;  // keeps mantissa * 10^k within int128 before the range check

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("invalid quantity \"{}\": {}", text, why));
}

}  // namespace

absl::StatusOr<int64_t> ParseMilliQuantity(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  absl::int128 mantissa = 0;
  int digits = 0;
  int exp10 = 0;
  size_t i = 0;
  bool any_digit = false;
  auto take_digit = [&](char c, bool fractional) {
    any_digit = true;
    if (mantissa == 0 && c == '0') {
      if (fractional) --exp10;
      return true;
    }
    if (digits >= kMaxDigits) {
      // Further integer digits only scale; fractional ones beyond precision are dropped
      // (they are far below a milli-unit once 30 significant digits are kept).
      if (!fractional) ++exp10;
      return true;
    }
    mantissa = mantissa * 10 + (c - '0');
    ++digits;
    if (fractional) --exp10;
    return true;
  };
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') take_digit(s[i++], false);
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') take_digit(s[i++], true);
  }
  if (!any_digit) return Invalid(text, "no digits");
  std::string_view suffix = s.substr(i);
  int exp2 = 0;
  if (suffix.empty()) {
  } else if (suffix == "n") {
    exp10 -= 9;
  } else if (suffix == "u") {
    exp10 -= 6;
  } else if (suffix == "m") {
    exp10 -= 3;
  } else if (suffix == "k") {
    exp10 += 3;
  } else if (suffix == "M") {
    exp10 += 6;
  } else if (suffix == "G") {
    exp10 += 9;
  } else if (suffix == "T") {
    exp10 += 12;
  } else if (suffix == "P") {
    exp10 += 15;
  } else if (suffix == "E") {
    exp10 += 18;
  } else if (suffix == "Ki") {
    exp2 = 10;
  } else if (suffix == "Mi") {
    exp2 = 20;
  } else if (suffix == "Gi") {
    exp2 = 30;
  } else if (suffix == "Ti") {
    exp2 = 40;
  } else if (suffix == "Pi") {
    exp2 = 50;
  } else if (suffix == "Ei") {
    exp2 = 60;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty() || e.size() > 6) return Invalid(text, "bad exponent");
    int v = 0;
    for (char c : e) {
      if (c < '0' || c > '9') return Invalid(text, "bad exponent");
      v = v * 10 + (c - '0');
    }
    exp10 += eneg ? -v : v;
  } else {
    return Invalid(text, "unknown suffix");
  }
  if (mantissa == 0) return 0;

  const absl::int128 kMax = std::numeric_limits<int64_t>::max();
  exp10 += 3;  // to milli-units
  absl::int128 value = mantissa;
  for (int k = 0; k < exp2; ++k) {
    value *= 2;
    if (value > kMax) return Invalid(text, "out of range");
  }
  if (exp10 >= 0) {
    for (int k = 0; k < exp10; ++k) {
      value *= 10;
      if (value > kMax) return Invalid(text, "out of range");
    }
  } else {
    // Divide, rounding any remainder up (away from zero), as Kubernetes rounds sub-milli values.
    absl::int128 divisor = 1;
    for (int k = 0; k < -exp10; ++k) {
      divisor *= 10;
      if (divisor > value) {
        value = 1;  // non-zero below one milli-unit rounds up to 1m
        divisor = 1;
        break;
      }
    }
    absl::int128 q = value / divisor;
    if (value % divisor != 0) q += 1;
    value = q;
  }
  if (value > kMax) return Invalid(text, "out of range");
  int64_t out = static_cast<int64_t>(value);
  return negative ? -out : out;
}

absl::StatusOr<int64_t> MilliQuantityFromJson(const json::Value& v) {
  if (v.IsString()) return ParseMilliQuantity(json::AsView(v));
  if (v.IsInt64()) {
    int64_t units = v.GetInt64();
    if (units > std::numeric_limits<int64_t>::max() / 1000 ||
        units < std::numeric_limits<int64_t>::min() / 1000) {
      return absl::InvalidArgumentError(fmt::format("quantity {} out of range", units));
    }
    return units * 1000;
  }
  return absl::InvalidArgumentError("quantity must be a string or an integer");
}

std::string FormatMilliQuantity(int64_t milli) {
  if (milli % 1000 == 0) return fmt::format("{}", milli / 1000);
  return fmt::format("{}m", milli);
}

absl::StatusOr<MilliResourceList> ParseMilliResourceList(const json::Value* list) {
  MilliResourceList out;
  if (list == nullptr || !list->IsObject()) return out;
  for (const auto& m : list->GetObject()) {
    auto q = MilliQuantityFromJson(m.value);
    if (!q.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("resource \"{}\": {}", json::AsView(m.name), MessageOf(q.status())));
    }
    out[std::string(json::AsView(m.name))] = *q;
  }
  return out;
}

absl::Status AddInto(MilliResourceList& a, const MilliResourceList& b) {
  for (const auto& [name, v] : b) {
    int64_t& slot = a[name];
    int64_t sum;
    if (__builtin_add_overflow(slot, v, &sum)) {
      return absl::OutOfRangeError(fmt::format("resource \"{}\" sum out of range", name));
    }
    slot = sum;
  }
  return absl::OkStatus();
}

void MaxInto(MilliResourceList& a, const MilliResourceList& b) {
  for (const auto& [name, v] : b) {
    auto it = a.find(name);
    if (it == a.end()) {
      a.emplace(name, v);
    } else if (v > it->second) {
      it->second = v;
    }
  }
}

json::Value ToJson(const MilliResourceList& list, json::Allocator& alloc) {
  json::Value obj(rapidjson::kObjectType);
  for (const auto& [name, v] : list) {
    obj.AddMember(json::MakeString(name, alloc), json::MakeString(FormatMilliQuantity(v), alloc),
                  alloc);
  }
  return obj;
}

}  // namespace basalt::controllers
