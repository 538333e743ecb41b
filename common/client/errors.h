#pragma once
// Maps API server responses to absl::Status once, for every Basalt component (STYLE.md):
//   404 kNotFound, 409 kAborted (conflict: re-read and retry) but 409 AlreadyExists
//   kAlreadyExists, 410 kOutOfRange (resourceVersion too old: relist), 429/503 kUnavailable,
//   401 kUnauthenticated, 403 kPermissionDenied, 400/422 kInvalidArgument (and 405
//   kUnimplemented, 500 kInternal, 504 kDeadlineExceeded).
// The message carries the Kubernetes Status message and reason; the HTTP code and reason also
// travel as Status payloads, read with HttpCodeOf / ReasonOf and the Is* helpers.

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace basalt::client {

// Status payload type URLs (values: the reason string, the decimal HTTP code).
inline constexpr char kReasonPayload[] = "type.basalt.dev/client.ApiError.reason";
inline constexpr char kHttpCodePayload[] = "type.basalt.dev/client.ApiError.code";

absl::StatusCode CodeForHttpStatus(int http_status, std::string_view reason);

// Builds the Status for an HTTP error response. `context` ("GET /api/v1/...") prefixes the
// message. `body` is normally a Kubernetes Status object; anything else is quoted (truncated).
// Returns OK for 2xx.
absl::Status ApiError(int http_status, std::string_view body, std::string_view context = {});

// Builds the Status for a Kubernetes Status object (e.g. from a watch ERROR event).
absl::Status StatusFromApiStatusObject(std::string_view status_json, std::string_view context = {});

// The Kubernetes reason ("Conflict", "NotFound", "AlreadyExists", "Expired", "Gone", ...) or "".
std::string ReasonOf(const absl::Status& status);
// The HTTP status code, or 0 when the status did not come from an API response.
int HttpCodeOf(const absl::Status& status);

// absl::IsNotFound and absl::IsAlreadyExists already answer "404?" and "409 AlreadyExists?"
// (kNotFound / kAlreadyExists come only from those); same-named helpers here would make
// unqualified calls ambiguous through ADL.
bool IsConflict(const absl::Status& status);  // 409 other than AlreadyExists: re-read, retry
bool IsGone(const absl::Status& status);      // 410 / Expired: relist
bool IsTooManyRequests(const absl::Status& status);
bool IsForbidden(const absl::Status& status);
bool IsInvalid(const absl::Status& status);  // 422 / 400

}  // namespace basalt::client
