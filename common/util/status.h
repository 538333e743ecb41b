#pragma once
// Status helpers shared by every Basalt library. Debian's Abseil (2022-06) lacks the
// RETURN_IF_ERROR / ASSIGN_OR_RETURN macros, so Basalt carries its own.

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define BASALT_STATUS_CONCAT_INNER_(a, b) a##b
#define BASALT_STATUS_CONCAT_(a, b) BASALT_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) and returns it from the calling function if not OK.
#define BASALT_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status basalt_status_ = (expr);          \
    if (!basalt_status_.ok()) return basalt_status_; \
  } while (0)

// BASALT_ASSIGN_OR_RETURN(lhs, rexpr): evaluates `rexpr` (an absl::StatusOr<T>); on error
// returns its status, otherwise move-assigns the value to `lhs` (which may be a declaration,
// e.g. `auto x` or `const Foo& y` is not allowed; use values).
#define BASALT_ASSIGN_OR_RETURN(lhs, rexpr) \
  BASALT_ASSIGN_OR_RETURN_IMPL_(BASALT_STATUS_CONCAT_(basalt_statusor_, __LINE__), lhs, rexpr)

#define BASALT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = *std::move(statusor)

namespace basalt {

// Debian's Abseil is built with its own absl::string_view (not std::string_view), so
// absl::StrCat and friends do not accept std::string_view. Use fmt::format for messages and
// this to read a Status message as a std::string_view.
inline std::string_view MessageOf(const absl::Status& s) {
  return std::string_view(s.message().data(), s.message().size());
}

// Prefixes a non-OK status's message with `context` ("reading kubeconfig /x: <msg>"),
// keeping its code. OK passes through.
inline absl::Status Annotate(const absl::Status& s, std::string_view context) {
  if (s.ok()) return s;
  std::string msg(context);
  msg += ": ";
  msg += MessageOf(s);
  return absl::Status(s.code(), msg);
}

}  // namespace basalt
