#include "common/runtime/flags.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/runtime/runner.h"
#include "common/runtime/version.h"

namespace basalt::runtime {
namespace {

TEST_CASE("ParseRuntimeFlags: takes runtime flags out and leaves the binary's own", "[flags]") {
  std::vector<std::string> args = {
      "--controllers=job,queue", "--metrics-addr=:9090", "-v", "4",         "--health-addr",
      "127.0.0.1:9091",          "--kubeconfig",         "/k", "positional"};
  auto options = ParseRuntimeFlags(args);
  REQUIRE(options.ok());
  CHECK(options->metrics_addr == ":9090");
  CHECK(options->health_addr == "127.0.0.1:9091");
  CHECK(options->verbosity == 4);
  CHECK_FALSE(options->print_version);
  CHECK(args ==
        std::vector<std::string>{"--controllers=job,queue", "--kubeconfig", "/k", "positional"});
}

TEST_CASE("ParseRuntimeFlags: klog -v spellings, --version and defaults", "[flags]") {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--v=3"}, std::vector<std::string>{"-v=3"},
        std::vector<std::string>{"--v", "3"}}) {
    auto options = ParseRuntimeFlags(args);
    REQUIRE(options.ok());
    CHECK(options->verbosity == 3);
    CHECK(args.empty());
  }
  std::vector<std::string> args = {"--version"};
  RuntimeOptions defaults;
  defaults.metrics_addr = ":8443";
  auto options = ParseRuntimeFlags(args, defaults);
  REQUIRE(options.ok());
  CHECK(options->print_version);
  CHECK(options->metrics_addr == ":8443");
  CHECK(options->health_addr == ":8081");
}

TEST_CASE("ParseRuntimeFlags: bad values are errors, after -- nothing is taken", "[flags]") {
  std::vector<std::string> missing = {"--metrics-addr"};
  CHECK(ParseRuntimeFlags(missing).status().code() == absl::StatusCode::kInvalidArgument);
  std::vector<std::string> bad_v = {"-v", "lots"};
  CHECK(ParseRuntimeFlags(bad_v).status().code() == absl::StatusCode::kInvalidArgument);
  std::vector<std::string> negative = {"--v=-1"};
  CHECK_FALSE(ParseRuntimeFlags(negative).ok());
  std::vector<std::string> rest = {"--", "-v", "9"};
  auto options = ParseRuntimeFlags(rest);
  REQUIRE(options.ok());
  CHECK(options->verbosity == 0);
  CHECK(rest == std::vector<std::string>{"--", "-v", "9"});
}

TEST_CASE("Version: --version prints the binary name and the Basalt version", "[flags]") {
  std::vector<std::string> args = {"--version"};
  auto options = ParseRuntimeFlags(args);
  REQUIRE(options.ok());
  std::FILE* out = std::tmpfile();
  REQUIRE(out != nullptr);
  CHECK(MaybePrintVersion(*options, "vc-webhook-manager", out));
  std::rewind(out);
  char line[128] = {};
  REQUIRE(std::fgets(line, sizeof(line), out) != nullptr);
  std::fclose(out);
  CHECK(std::string(line) == "vc-webhook-manager (Basalt) " + std::string(BasaltVersion()) + "\n");
  CHECK_FALSE(MaybePrintVersion(RuntimeOptions{}, "x", stdout));

  CHECK_FALSE(BasaltVersion().empty());
  CHECK(VersionLine("vc-scheduler") == "vc-scheduler (Basalt) " + std::string(BasaltVersion()));
}

TEST_CASE("HandleRuntimeFlags: goes on, stops with 0 for --version, 2 for a bad flag", "[flags]") {
  RuntimeOptions options;
  std::vector<std::string> args = {"--metrics-addr=127.0.0.1:0", "--own=1"};
  CHECK_FALSE(HandleRuntimeFlags("bin", args, &options).has_value());
  CHECK(options.metrics_addr == "127.0.0.1:0");
  CHECK(args == std::vector<std::string>{"--own=1"});

  args = {"-v", "x"};
  CHECK(HandleRuntimeFlags("bin", args, &options) == std::optional<int>(2));
  args = {"--version"};
  CHECK(HandleRuntimeFlags("bin", args, &options) == std::optional<int>(0));
  CHECK(UsageError("bin", "--x must be positive") == 2);
}

TEST_CASE("ExitCode: 0 for a clean stop, 1 for an error", "[runner]") {
  CHECK(ExitCode(absl::OkStatus()) == 0);
  CHECK(ExitCode(absl::InternalError("boom")) == 1);
}

}  // namespace
}  // namespace basalt::runtime
