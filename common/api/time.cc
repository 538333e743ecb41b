#include "common/api/time.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "fmt/format.h"

namespace basalt::api {
namespace {

using std::chrono::days;
using std::chrono::duration_cast;
using std::chrono::floor;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      fmt::format("invalid RFC 3339 time \"{}\": {} (want e.g. 2024-05-01T10:00:00Z)", text, why));
}

// Reads exactly `n` digits at `pos`.
bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

struct Civil {
  int year, month, day, hour, minute, second;
  int64_t nanos;
};

Civil ToCivil(Time t) {
  // Split the nanosecond count with integer arithmetic: floor<days>(t) (or floor<seconds>)
  // lies before Time::min() for times in its last day, and converting it back to nanoseconds
  // overflowed int64 (UBSan, FormatRfc3339Micro of a time just above Time::min()).
  const int64_t count = floor<nanoseconds>(t).time_since_epoch().count();
  int64_t secs = count / 1'000'000'000;
  int64_t nanos = count % 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --secs;
  }
  int64_t day = secs / 86400;
  int64_t second_of_day = secs % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --day;
  }
  const std::chrono::year_month_day ymd{std::chrono::sys_days(days(day))};
  return Civil{static_cast<int>(ymd.year()),
               static_cast<int>(static_cast<unsigned>(ymd.month())),
               static_cast<int>(static_cast<unsigned>(ymd.day())),
               static_cast<int>(second_of_day / 3600),
               static_cast<int>(second_of_day % 3600 / 60),
               static_cast<int>(second_of_day % 60),
               nanos};
}

template <typename Unit>
Time FloorTo(Time t) {
  constexpr Unit kEarliest = std::chrono::ceil<Unit>(Time::duration::min());
  return Time(std::chrono::duration_cast<Time::duration>(
      std::max(std::chrono::floor<Unit>(t.time_since_epoch()), kEarliest)));
}

// secs + nanos/1e9 (0 <= nanos < 1e9) as a Time, saturated to [Time::min(), Time::max()].
Time FromSecondsAndNanos(int64_t secs, int64_t nanos) {
  using Rep = Time::duration::rep;
  constexpr int64_t kPerSecond = Time::duration::period::den / Time::duration::period::num;
  static_assert(kPerSecond >= 1 && kPerSecond <= 1'000'000'000 && 1'000'000'000 % kPerSecond == 0);
  const int64_t ticks = nanos / (1'000'000'000 / kPerSecond);  // truncates below the tick
  constexpr Rep kMax = std::numeric_limits<Rep>::max();
  constexpr Rep kMin = std::numeric_limits<Rep>::min();
  // Floor division keeps the remainders non-negative, so the comparisons below are exact.
  constexpr int64_t kMaxSecs = kMax / kPerSecond;
  constexpr int64_t kMaxRest = kMax % kPerSecond;
  constexpr int64_t kMinSecs = kMin / kPerSecond - (kMin % kPerSecond != 0 ? 1 : 0);
  constexpr int64_t kMinRest = kMin % kPerSecond != 0 ? kPerSecond + kMin % kPerSecond : 0;
  if (secs > kMaxSecs || (secs == kMaxSecs && ticks > kMaxRest)) return Time::max();
  if (secs < kMinSecs || (secs == kMinSecs && ticks < kMinRest)) return Time::min();
  // In range: (secs + 1) * kPerSecond cannot overflow at the low end, secs * kPerSecond at the
  // high end.
  const Rep count =
      secs >= 0 ? secs * kPerSecond + ticks : (secs + 1) * kPerSecond - (kPerSecond - ticks);
  return Time(Time::duration(count));
}

}  // namespace

absl::StatusOr<Time> ParseRfc3339(std::string_view text) {
  int year, month, day, hour, minute, second;
  if (!Digits(text, 0, 4, year) || text.size() < 19 || text[4] != '-' ||
      !Digits(text, 5, 2, month) || text[7] != '-' || !Digits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't') || !Digits(text, 11, 2, hour) || text[13] != ':' ||
      !Digits(text, 14, 2, minute) || text[16] != ':' || !Digits(text, 17, 2, second)) {
    return Bad(text, "expected YYYY-MM-DDTHH:MM:SS");
  }
  const std::chrono::year_month_day ymd{std::chrono::year(year),
                                        std::chrono::month(static_cast<unsigned>(month)),
                                        std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok()) return Bad(text, "no such date");
  if (hour > 23 || minute > 59 || second > 60) return Bad(text, "time of day out of range");
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t n = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (n >= 9) return Bad(text, "more than 9 fraction digits");
      nanos = nanos * 10 + (text[pos] - '0');
      ++n;
      ++pos;
    }
    if (n == 0) return Bad(text, "empty fraction");
    for (size_t i = n; i < 9; ++i) nanos *= 10;
  }
  int offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    int oh, om;
    if (!Digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !Digits(text, pos + 4, 2, om) || oh > 23 || om > 59) {
      return Bad(text, "bad zone offset");
    }
    offset_minutes = sign * (oh * 60 + om);
    pos += 6;
  } else {
    return Bad(text, "missing zone (Z or +hh:mm)");
  }
  if (pos != text.size()) return Bad(text, "trailing characters");
  // Whole seconds first: years 0000..9999 fit in int64 seconds, not always in nanoseconds.
  const int64_t secs =
      static_cast<int64_t>(std::chrono::sys_days(ymd).time_since_epoch().count()) * 86400 +
      int64_t{hour} * 3600 + int64_t{minute} * 60 + second - int64_t{offset_minutes} * 60;
  return FromSecondsAndNanos(secs, nanos);
}

std::string FormatRfc3339(Time t) {
  const Civil c = ToCivil(t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, c.hour,
                     c.minute, c.second);
}

std::string FormatRfc3339Micro(Time t) {
  const Civil c = ToCivil(t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", c.year, c.month, c.day, c.hour,
                     c.minute, c.second, c.nanos / 1000);
}

Time FloorToSeconds(Time t) { return FloorTo<std::chrono::seconds>(t); }
Time FloorToMicros(Time t) { return FloorTo<std::chrono::microseconds>(t); }

}  // namespace basalt::api
