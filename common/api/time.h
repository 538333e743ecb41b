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
absl::StatusOr<Time> ParseRfc3339(std::string_view text);

// "2024-05-01T10:00:00Z": seconds precision, truncating sub-seconds (metav1.Time).
std::string FormatRfc3339(Time t);
// "2024-05-01T10:00:00.123456Z": always six fraction digits (metav1.MicroTime).
std::string FormatRfc3339Micro(Time t);

}  // namespace basalt::api
