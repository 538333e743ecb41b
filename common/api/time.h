#pragma once
// RFC 3339 timestamps as the Kubernetes API writes them: metav1.Time ("2024-05-01T10:00:00Z",
// whole seconds, UTC) and metav1.MicroTime ("2024-05-01T10:00:00.123456Z", used by Lease
// acquireTime/renewTime and Event eventTime).
//
// Pure functions; thread-safe.

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace basalt::api {

// Wall-clock instant. Parsed values keep up to nanosecond precision.
using Time = std::chrono::system_clock::time_point;

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)" (a lowercase "t"/"z" is accepted;
// up to 9 fraction digits). Errors are kInvalidArgument and quote the input.
//
// Time counts int64 nanoseconds, so it spans 1677-09-21T00:12:43.145224192Z to
// 2262-04-11T23:47:16.854775807Z, while RFC 3339 (and Go's metav1.Time) go from year 0000 to
// 9999. A valid timestamp outside that span saturates to Time::min() / Time::max() rather than
// failing: it still compares earlier / later than every instant Basalt meets (which is all a
// start time, a deadline or a lease renewal is used for), and the object carrying it stays
// readable (failing would make a whole Pod or Job unreadable for one odd field set by someone
// else). Formatting a saturated value prints the bound ("2262-04-11T23:47:16Z"), so it is
// never mistaken for a realistic time; no arithmetic on it overflows in the parser.
absl::StatusOr<Time> ParseRfc3339(std::string_view text);

// t floored to whole seconds (metav1.Time) / microseconds (metav1.MicroTime), what a write and
// re-parse of t gives. Never below the earliest whole second / microsecond a Time holds: a
// plain floor of Time::min() lies before it and overflows int64 nanoseconds (fuzz_api_objects
// found it under UBSan, in Job, PodGroup and CronJob statuses alike).
Time FloorToSeconds(Time t);
Time FloorToMicros(Time t);

// "2024-05-01T10:00:00Z": seconds precision, truncating sub-seconds (metav1.Time).
std::string FormatRfc3339(Time t);
// "2024-05-01T10:00:00.123456Z": always six fraction digits (metav1.MicroTime).
std::string FormatRfc3339Micro(Time t);

}  // namespace basalt::api
