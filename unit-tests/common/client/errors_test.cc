#include "common/client/errors.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/util/status.h"

using basalt::MessageOf;
using namespace basalt::client;

namespace {

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
         "\"message\":\"" +
         message + "\",\"reason\":\"" + reason + "\",\"code\":" + std::to_string(code) + "}";
}

}  // namespace

TEST_CASE("ApiError: HTTP codes map to absl codes as STYLE.md says", "[errors]") {
  struct Case {
    int http;
    std::string reason;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {404, "NotFound", absl::StatusCode::kNotFound},
      {409, "Conflict", absl::StatusCode::kAborted},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {410, "Expired", absl::StatusCode::kOutOfRange},
      {410, "Gone", absl::StatusCode::kOutOfRange},
      {429, "TooManyRequests", absl::StatusCode::kUnavailable},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied},
      {400, "BadRequest", absl::StatusCode::kInvalidArgument},
      {422, "Invalid", absl::StatusCode::kInvalidArgument},
      {405, "MethodNotAllowed", absl::StatusCode::kUnimplemented},
      {500, "InternalError", absl::StatusCode::kInternal},
      {504, "Timeout", absl::StatusCode::kDeadlineExceeded},
  };
  for (const Case& c : cases) {
    absl::Status s = ApiError(c.http, StatusBody(c.http, c.reason, "it went wrong"), "GET /x");
    INFO(c.http << " " << c.reason);
    REQUIRE(s.code() == c.code);
    REQUIRE(ReasonOf(s) == c.reason);
    REQUIRE(HttpCodeOf(s) == c.http);
    REQUIRE(MessageOf(s) ==
            "GET /x: " + c.reason + ": it went wrong (HTTP " + std::to_string(c.http) + ")");
  }
  REQUIRE(ApiError(200, "{}").ok());
  REQUIRE(ApiError(201, "{}").ok());
}

TEST_CASE("ApiError: the Is* helpers tell conflicts from duplicates and expiry", "[errors]") {
  absl::Status conflict = ApiError(
      409, StatusBody(409, "Conflict",
                      "Operation cannot be fulfilled on configmaps \\\"c\\\": the object has "
                      "been modified"));
  REQUIRE(IsConflict(conflict));
  REQUIRE_FALSE(absl::IsAlreadyExists(conflict));
  REQUIRE(MessageOf(conflict).find("the object has been modified") != std::string_view::npos);

  absl::Status exists = ApiError(409, StatusBody(409, "AlreadyExists", "exists"));
  REQUIRE(absl::IsAlreadyExists(exists));
  REQUIRE_FALSE(IsConflict(exists));

  REQUIRE(IsGone(ApiError(410, StatusBody(410, "Expired", "too old resource version"))));
  REQUIRE(absl::IsNotFound(ApiError(404, StatusBody(404, "NotFound", "pods \\\"p\\\" not found"))));
  REQUIRE(IsTooManyRequests(ApiError(429, StatusBody(429, "TooManyRequests", "slow down"))));
  REQUIRE(IsForbidden(ApiError(403, StatusBody(403, "Forbidden", "no"))));
  REQUIRE(IsInvalid(ApiError(422, StatusBody(422, "Invalid", "bad"))));
  // A non-API status has no code or reason.
  REQUIRE(HttpCodeOf(absl::AbortedError("x")) == 0);
  REQUIRE_FALSE(IsConflict(absl::AbortedError("x")));
}

TEST_CASE("ApiError: a body that is not a Status is quoted, truncated", "[errors]") {
  absl::Status s = ApiError(502, "<html>bad gateway</html>\n", "GET /api");
  REQUIRE(s.code() == absl::StatusCode::kUnavailable);
  REQUIRE(MessageOf(s) == "GET /api: <html>bad gateway</html>  (HTTP 502)");
  absl::Status big = ApiError(500, std::string(5000, 'x'));
  REQUIRE(MessageOf(big).size() < 400);
  REQUIRE(ApiError(404, "").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("StatusFromApiStatusObject: a watch ERROR 410 becomes kOutOfRange", "[errors]") {
  absl::Status s = StatusFromApiStatusObject(
      StatusBody(410, "Expired", "too old resource version: 1 (5)"), "watch");
  REQUIRE(s.code() == absl::StatusCode::kOutOfRange);
  REQUIRE(IsGone(s));
  REQUIRE(MessageOf(s) == "watch: Expired: too old resource version: 1 (5) (HTTP 410)");
  REQUIRE(StatusFromApiStatusObject("nope").code() == absl::StatusCode::kInternal);
}
