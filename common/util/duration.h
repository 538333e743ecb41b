#pragma once
// Go's time.Duration text form, the syntax of Volcano's duration fields (a lifecycle policy's
// `timeout`) and of the binaries' duration flags (--schedule-period, --leader-elect-*):
// a sign, then one or more decimal numbers with a unit each ("300ms", "1.5h", "2h45m", "-1s";
// units ns, us/µs, ms, s, m, h), or a bare "0".
//
// Pure functions; thread-safe.

#include <chrono>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace basalt {

// Parses a Go duration exactly as time.ParseDuration does (nanosecond precision; fractions
// below a nanosecond are dropped). kInvalidArgument naming the input for anything else,
// including values beyond ±292 years.
absl::StatusOr<std::chrono::nanoseconds> ParseGoDuration(std::string_view text);

// Formats like Go's time.Duration.String(): "0s", "300ms", "1.5s", "5m0s", "1h30m0s", "1.5µs".
std::string FormatGoDuration(std::chrono::nanoseconds d);

}  // namespace basalt
