#include "controllers/cronjob/schedule.h"

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <vector>

#include "absl/time/civil_time.h"
#include "common/util/duration.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

// (absl's string helpers take absl::string_view, which is not std::string_view in the
// distribution's build of abseil.)
std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view Strip(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The whitespace-separated words of `s`.
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    const size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// A non-negative decimal number (digits only).
bool ParseDigits(std::string_view s, int* out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  std::from_chars(s.data(), s.data() + s.size(), *out);
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct FieldSpec {
  std::string_view name;
  int min;
  int max;
  const std::array<std::string_view, 12>* names;  // index i names value min + i
};

constexpr std::array<std::string_view, 12> kMonthNames = {"jan", "feb", "mar", "apr", "may", "jun",
                                                          "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 12> kDayNames = {"sun", "mon", "tue", "wed", "thu", "fri",
                                                        "sat", "",    "",    "",    "",    ""};

constexpr FieldSpec kFields[5] = {
    {"minute", 0, 59, nullptr},        {"hour", 0, 23, nullptr},
    {"day of month", 1, 31, nullptr},  {"month", 1, 12, &kMonthNames},
    {"day of week", 0, 6, &kDayNames},
};

absl::StatusOr<int> ParseValue(std::string_view text, const FieldSpec& f) {
  if (f.names != nullptr) {
    const std::string lower = Lower(text);
    for (size_t i = 0; i < f.names->size(); ++i) {
      if (!(*f.names)[i].empty() && lower == (*f.names)[i]) return f.min + static_cast<int>(i);
    }
  }
  int v = 0;
  if (!ParseDigits(text, &v)) {
    return absl::InvalidArgumentError(fmt::format("{} field: \"{}\" is not a number{}", f.name,
                                                  text, f.names != nullptr ? " or a name" : ""));
  }
  if (v < f.min || v > f.max) {
    return absl::InvalidArgumentError(
        fmt::format("{} field: {} is out of range {}-{}", f.name, v, f.min, f.max));
  }
  return v;
}

// One field: its bits, and whether it is unrestricted (`*` or `?` without a step > 1).
absl::StatusOr<std::pair<uint64_t, bool>> ParseField(std::string_view text, const FieldSpec& f) {
  uint64_t bits = 0;
  bool star = false;
  for (std::string_view part : Split(text, ',')) {
    std::vector<std::string_view> range_step = Split(part, '/');
    if (range_step.size() > 2) {
      return absl::InvalidArgumentError(
          fmt::format("{} field: \"{}\" has more than one '/'", f.name, part));
    }
    std::string_view range = range_step[0];
    int lo = 0;
    int hi = 0;
    bool part_star = false;
    if (range == "*" || range == "?") {
      lo = f.min;
      hi = f.max;
      part_star = true;
    } else {
      std::vector<std::string_view> ends = Split(range, '-');
      if (ends.size() > 2) {
        return absl::InvalidArgumentError(
            fmt::format("{} field: \"{}\" has more than one '-'", f.name, part));
      }
      absl::StatusOr<int> a = ParseValue(ends[0], f);
      if (!a.ok()) return a.status();
      lo = hi = *a;
      if (ends.size() == 2) {
        absl::StatusOr<int> b = ParseValue(ends[1], f);
        if (!b.ok()) return b.status();
        hi = *b;
      }
    }
    int step = 1;
    if (range_step.size() == 2) {
      if (!ParseDigits(range_step[1], &step) || step <= 0) {
        return absl::InvalidArgumentError(
            fmt::format("{} field: step \"{}\" must be a positive number", f.name, range_step[1]));
      }
      // "N/step" means N to the field's maximum.
      if (!part_star && range.find('-') == std::string_view::npos) hi = f.max;
      if (step > 1) part_star = false;
    }
    if (lo > hi) {
      return absl::InvalidArgumentError(fmt::format(
          "{} field: \"{}\": the range start {} is after its end {}", f.name, part, lo, hi));
    }
    for (int v = lo; v <= hi; v += step) bits |= uint64_t{1} << v;
    star = star || part_star;
  }
  return std::make_pair(bits, star);
}

std::string_view Descriptor(std::string_view s) {
  if (s == "@yearly" || s == "@annually") return "0 0 1 1 *";
  if (s == "@monthly") return "0 0 1 * *";
  if (s == "@weekly") return "0 0 * * 0";
  if (s == "@daily" || s == "@midnight") return "0 0 * * *";
  if (s == "@hourly") return "0 * * * *";
  return {};
}

}  // namespace

absl::StatusOr<absl::TimeZone> CronSchedule::LoadZone(const std::optional<std::string>& name) {
  if (!name.has_value()) return absl::LocalTimeZone();
  absl::TimeZone tz;
  // absl accepts fixed offsets such as "Fixed/UTC+01:00"; an IANA name is what Kubernetes
  // accepts, and "Local" would silently mean the controller's zone.
  if (name->empty() || *name == "Local" || name->rfind("Fixed/", 0) == 0 ||
      !absl::LoadTimeZone(*name, &tz)) {
    return absl::InvalidArgumentError(
        fmt::format("unknown time zone \"{}\" (an IANA name such as \"Europe/Paris\" or "
                    "\"UTC\" is expected)",
                    *name));
  }
  return tz;
}

absl::StatusOr<CronSchedule> CronSchedule::Parse(std::string_view schedule,
                                                 const std::optional<std::string>& time_zone) {
  CronSchedule s;
  absl::StatusOr<absl::TimeZone> tz = LoadZone(time_zone);
  if (!tz.ok()) return tz.status();
  s.zone_ = *tz;
  std::string_view text = Strip(schedule);
  if (text.empty()) return absl::InvalidArgumentError("the schedule is empty");
  if (text.rfind("TZ=", 0) == 0 || text.rfind("CRON_TZ=", 0) == 0) {
    return absl::InvalidArgumentError(
        "a TZ= or CRON_TZ= prefix is not supported: set spec.timeZone instead");
  }
  if (text.rfind("@every", 0) == 0) {
    std::string_view d = Strip(text.substr(6));
    absl::StatusOr<std::chrono::nanoseconds> every = ParseGoDuration(d);
    if (d.empty() || text.size() == 6 || !IsSpace(text[6]) || !every.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("@every needs a Go duration such as \"@every 1h30m\", got \"{}\"", d));
    }
    absl::Duration dur = absl::Trunc(absl::FromChrono(*every), absl::Seconds(1));
    if (dur < absl::Seconds(1)) dur = absl::Seconds(1);
    s.every_ = dur;
    return s;
  }
  if (text.front() == '@') {
    std::string_view expanded = Descriptor(text);
    if (expanded.empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "unknown descriptor \"{}\" (known: @yearly, @annually, @monthly, @weekly, @daily, "
          "@midnight, @hourly, @every <duration>)",
          text));
    }
    text = expanded;
  }
  std::vector<std::string_view> fields = Words(text);
  if (fields.size() != 5) {
    return absl::InvalidArgumentError(fmt::format(
        "expected 5 fields (minute hour day-of-month month day-of-week), got {}", fields.size()));
  }
  uint64_t* const bits[5] = {&s.minutes_, &s.hours_, &s.dom_, &s.months_, &s.dow_};
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<std::pair<uint64_t, bool>> f = ParseField(fields[i], kFields[i]);
    if (!f.ok()) return f.status();
    *bits[i] = f->first;
    if (i == 2) s.dom_star_ = f->second;
    if (i == 4) s.dow_star_ = f->second;
  }
  return s;
}

bool CronSchedule::DayMatches(int year, int month, int day) const {
  const absl::CivilDay d(year, month, day);
  const bool dom = (dom_ >> d.day()) & 1;
  int wd = 0;
  switch (absl::GetWeekday(d)) {
    case absl::Weekday::sunday:
      wd = 0;
      break;
    case absl::Weekday::monday:
      wd = 1;
      break;
    case absl::Weekday::tuesday:
      wd = 2;
      break;
    case absl::Weekday::wednesday:
      wd = 3;
      break;
    case absl::Weekday::thursday:
      wd = 4;
      break;
    case absl::Weekday::friday:
      wd = 5;
      break;
    case absl::Weekday::saturday:
      wd = 6;
      break;
  }
  const bool dow = (dow_ >> wd) & 1;
  if (dom_star_ || dow_star_) return dom && dow;
  return dom || dow;
}

std::optional<api::Time> CronSchedule::Next(api::Time t) const {
  const absl::Time at = absl::FromChrono(t);
  if (every_) {
    const absl::Time base = absl::FromUnixSeconds(absl::ToUnixSeconds(at));
    return absl::ToChronoTime(base + *every_);
  }
  absl::CivilMinute m = absl::ToCivilMinute(at, zone_) + 1;
  const absl::civil_year_t limit = m.year() + 5;
  while (m.year() <= limit) {
    if (!((months_ >> m.month()) & 1)) {
      m = absl::CivilMinute(absl::CivilMonth(m) + 1);
      continue;
    }
    if (!DayMatches(static_cast<int>(m.year()), m.month(), m.day())) {
      m = absl::CivilMinute(absl::CivilDay(m) + 1);
      continue;
    }
    if (!((hours_ >> m.hour()) & 1)) {
      m = absl::CivilMinute(absl::CivilHour(m) + 1);
      continue;
    }
    if (!((minutes_ >> m.minute()) & 1)) {
      m += 1;
      continue;
    }
    const absl::Time fire = absl::FromCivil(m, zone_);
    if (fire <= at) {  // the second pass of a repeated (DST) hour
      m += 1;
      continue;
    }
    return absl::ToChronoTime(fire);
  }
  return std::nullopt;
}

std::string CronSchedule::FormatInZone(api::Time t) const {
  const absl::Time at = absl::FromChrono(t);
  if (zone_.At(at).offset == 0) return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", at, zone_);
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", at, zone_);
}

}  // namespace basalt::controllers
