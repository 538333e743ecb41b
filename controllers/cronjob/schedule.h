#pragma once
// CronSchedule: a CronJob's spec.schedule in spec.timeZone, and the times it fires.
//
// The grammar is the one Kubernetes and Volcano accept (robfig/cron's standard parser):
//   five fields "minute hour day-of-month month day-of-week" (0-59, 0-23, 1-31, 1-12 or
//   JAN-DEC, 0-6 or SUN-SAT), each a comma list of `*`, `?`, `N`, `N-M`, with an optional
//   `/step` (`N/step` means N to the field's maximum); day-of-month and day-of-week both
//   restricted (neither starts with `*` or `?`) match when either matches, else both must;
//   descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly, and
//   @every <Go duration> (at least 1s, whole seconds; fires that long after the previous
//   time). A `TZ=` or `CRON_TZ=` prefix is refused (spec.timeZone says it).
// Times are computed in the zone's civil time (IANA database under /usr/share/zoneinfo; no
// zone = the process's local zone, as Volcano's controller uses time.Local): a time skipped by
// a DST change fires at the transition (02:30 on a 02:00 -> 03:00 day fires at 03:00), once; a
// repeated time fires once (its first occurrence).
//
// Immutable after Parse; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/api/time.h"

namespace basalt::controllers {

class CronSchedule {
 public:
  // `time_zone` nullopt: the local zone; else an IANA name ("Europe/Paris", "UTC").
  // kInvalidArgument with a message naming the part at fault (no field prefix).
  static absl::StatusOr<CronSchedule> Parse(std::string_view schedule,
                                            const std::optional<std::string>& time_zone);
  // Loads an IANA zone; kInvalidArgument for an unknown name.
  static absl::StatusOr<absl::TimeZone> LoadZone(const std::optional<std::string>& name);

  // The first firing strictly after `t`, or nullopt if there is none in the next 5 years
  // (e.g. "0 0 30 2 *").
  std::optional<api::Time> Next(api::Time t) const;

  const absl::TimeZone& zone() const { return zone_; }
  // RFC 3339 of `t` in the schedule's zone ("2026-01-02T03:04:00+01:00", "Z" for UTC).
  std::string FormatInZone(api::Time t) const;

 private:
  CronSchedule() = default;
  bool DayMatches(int year, int month, int day) const;

  uint64_t minutes_ = 0;  // bit i: minute i
  uint64_t hours_ = 0;
  uint64_t dom_ = 0;
  uint64_t months_ = 0;
  uint64_t dow_ = 0;  // bit 0: Sunday
  bool dom_star_ = false;
  bool dow_star_ = false;
  std::optional<absl::Duration> every_;  // @every
  absl::TimeZone zone_;
};

}  // namespace basalt::controllers
