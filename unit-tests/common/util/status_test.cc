#include "common/util/status.h"

#include <catch2/catch.hpp>

namespace {
absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}
absl::StatusOr<int> Quarter(int x) {
  BASALT_ASSIGN_OR_RETURN(int h, Half(x));
  BASALT_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}
absl::Status Check(int x) {
  BASALT_RETURN_IF_ERROR(Quarter(x).status());
  return absl::OkStatus();
}
}  // namespace

TEST_CASE("status macros: propagate the first error and assign values", "[status]") {
  REQUIRE(*Quarter(8) == 2);
  REQUIRE(Quarter(6).status().message() == "odd");
  REQUIRE(Check(8).ok());
  REQUIRE(Check(2).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(basalt::Annotate(absl::NotFoundError("x"), "reading y").message() == "reading y: x");
}
