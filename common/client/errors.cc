#include "common/client/errors.h"

#include <charconv>
#include <optional>

#include "absl/strings/cord.h"
#include "common/util/json.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::client {
namespace {

constexpr size_t kMaxQuotedBody = 300;

std::string PayloadString(const absl::Status& status, const char* url) {
  absl::optional<absl::Cord> cord = status.GetPayload(url);
  if (!cord.has_value()) return {};
  return std::string(*cord);
}

std::string Quote(std::string_view body) {
  std::string s(body.substr(0, kMaxQuotedBody));
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (body.size() > kMaxQuotedBody) s += "...";
  return s;
}

absl::Status Build(int http_status, std::string_view reason, std::string_view message,
                   std::string_view context) {
  absl::StatusCode code = CodeForHttpStatus(http_status, reason);
  std::string text;
  if (!context.empty()) text = fmt::format("{}: ", context);
  if (!reason.empty()) text += fmt::format("{}: ", reason);
  text += message.empty() ? fmt::format("HTTP {}", http_status)
                          : fmt::format("{} (HTTP {})", message, http_status);
  absl::Status status(code, text);
  if (!reason.empty()) status.SetPayload(kReasonPayload, absl::Cord(std::string(reason)));
  status.SetPayload(kHttpCodePayload, absl::Cord(std::to_string(http_status)));
  return status;
}

}  // namespace

absl::StatusCode CodeForHttpStatus(int http_status, std::string_view reason) {
  if (http_status >= 200 && http_status < 300) return absl::StatusCode::kOk;
  switch (http_status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
    case 501:
      return absl::StatusCode::kUnimplemented;
    case 406:
      return absl::StatusCode::kInvalidArgument;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
    case 502:
    case 503:
      return absl::StatusCode::kUnavailable;
    case 500:
      return absl::StatusCode::kInternal;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return http_status >= 500 ? absl::StatusCode::kUnavailable : absl::StatusCode::kUnknown;
  }
}

absl::Status ApiError(int http_status, std::string_view body, std::string_view context) {
  if (http_status >= 200 && http_status < 300) return absl::OkStatus();
  absl::StatusOr<json::Document> doc = json::Parse(body);
  if (doc.ok() && doc->IsObject() && json::GetString(*doc, "kind") == "Status") {
    return Build(http_status, json::GetString(*doc, "reason"), json::GetString(*doc, "message"),
                 context);
  }
  return Build(http_status, "", body.empty() ? std::string_view() : Quote(body), context);
}

absl::Status StatusFromApiStatusObject(std::string_view status_json, std::string_view context) {
  absl::StatusOr<json::Document> doc = json::Parse(status_json);
  if (!doc.ok() || !doc->IsObject()) {
    return absl::InternalError(fmt::format("{}{}malformed Status object: {}", context,
                                           context.empty() ? "" : ": ", Quote(status_json)));
  }
  int code = static_cast<int>(json::GetInt(*doc, "code", 500));
  return Build(code, json::GetString(*doc, "reason"), json::GetString(*doc, "message"), context);
}

std::string ReasonOf(const absl::Status& status) { return PayloadString(status, kReasonPayload); }

int HttpCodeOf(const absl::Status& status) {
  std::string s = PayloadString(status, kHttpCodePayload);
  int code = 0;
  std::from_chars(s.data(), s.data() + s.size(), code);
  return code;
}

bool IsConflict(const absl::Status& status) {
  return status.code() == absl::StatusCode::kAborted && HttpCodeOf(status) == 409;
}
bool IsGone(const absl::Status& status) {
  return status.code() == absl::StatusCode::kOutOfRange &&
         (HttpCodeOf(status) == 410 || ReasonOf(status) == "Expired");
}
bool IsTooManyRequests(const absl::Status& status) { return HttpCodeOf(status) == 429; }
bool IsForbidden(const absl::Status& status) {
  return status.code() == absl::StatusCode::kPermissionDenied;
}
bool IsInvalid(const absl::Status& status) {
  int code = HttpCodeOf(status);
  return code == 422 || code == 400;
}

}  // namespace basalt::client
