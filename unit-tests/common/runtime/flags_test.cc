#include "common/runtime/flags.h"

#include <catch2/catch.hpp>
#include <chrono>
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

std::string ReadAll(std::FILE* f) {
  std::rewind(f);
  std::string text;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), f)) text.append(buf, n);
  std::fclose(f);
  return text;
}

TEST_CASE("HandleBinaryFlags: goes on, --help prints the whole usage, a bad flag is 2", "[flags]") {
  int workers = 8;
  std::string name = "x";
  FlagSet flags("bin");
  flags.Int("workers", &workers, "worker threads");
  flags.String("name", &name, "a name");

  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CHECK_FALSE(HandleBinaryFlags("bin", flags, {"--workers", "3", "--name=y"}, "", out, err));
  CHECK(workers == 3);
  CHECK(name == "y");
  CHECK(ReadAll(out).empty());
  CHECK(ReadAll(err).empty());

  out = std::tmpfile();
  err = std::tmpfile();
  CHECK(HandleBinaryFlags("bin", flags, {"--help"}, "  --extra\n", out, err) ==
        std::optional<int>(0));
  const std::string help = ReadAll(out);
  CHECK(help.starts_with("Usage of bin:"));
  CHECK(help.find("--workers") != std::string::npos);
  CHECK(help.find("  --extra\n") != std::string::npos);
  CHECK(help.find("--metrics-addr") != std::string::npos);  // the runtime flags' help
  CHECK(ReadAll(err).empty());

  out = std::tmpfile();
  err = std::tmpfile();
  CHECK(HandleBinaryFlags("bin", flags, {"--workers=many"}, "", out, err) == std::optional<int>(2));
  const std::string error = ReadAll(err);
  CHECK(error.starts_with("bin: invalid value \"many\" for flag --workers"));
  CHECK(error.find("Usage of bin:") != std::string::npos);
  CHECK(ReadAll(out).empty());
  CHECK(workers == 3);
}

TEST_CASE("TakeFlags: takes an options struct's flags out, 2 for a malformed value", "[flags]") {
  RuntimeOptions options;
  std::vector<std::string> args = {"--own", "--health-addr=:1", "x"};
  CHECK_FALSE(TakeFlags("bin", args, &options).has_value());
  CHECK(options.health_addr == ":1");
  CHECK(args == std::vector<std::string>{"--own", "x"});
  args = {"--v=-1", "x"};
  CHECK(TakeFlags("bin", args, &options) == std::optional<int>(2));
  CHECK(args == std::vector<std::string>{"--v=-1", "x"});
  CHECK(options.verbosity == 0);
}

TEST_CASE("CheckAtLeast/CheckInRange/CheckNotEmpty: one format naming flag and rule", "[flags]") {
  CHECK(CheckAtLeast("qps", 1, 1).ok());
  CHECK(CheckAtLeast("qps", 5, 1).ok());
  absl::Status s = CheckAtLeast("qps", 0, 1);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() == "--qps: must be at least 1, got 0");
  CHECK(CheckAtLeast("max-requeue-num", -2, -1).message() ==
        "--max-requeue-num: must be at least -1, got -2");

  CHECK(CheckInRange("workers", 1, 1, 256).ok());
  CHECK(CheckInRange("workers", 256, 1, 256).ok());
  CHECK(CheckInRange("workers", 0, 1, 256).message() == "--workers: must be in [1, 256], got 0");
  CHECK(CheckInRange("workers", 257, 1, 256).message() ==
        "--workers: must be in [1, 256], got 257");
  CHECK(CheckInRange("max-job-pods", int64_t{1} << 40, 1, 2147483647).message() ==
        "--max-job-pods: must be in [1, 2147483647], got 1099511627776");

  CHECK(CheckNotEmpty("listen-address", "0.0.0.0").ok());
  CHECK(CheckNotEmpty("listen-address", "").message() == "--listen-address: must not be empty");
}

TEST_CASE("ParseDurationFlag: Go syntax, a floor, the flag in every error", "[flags]") {
  using std::chrono::milliseconds;
  CHECK(*ParseDurationFlag("schedule-period", "1m30s") == milliseconds(90000));
  CHECK(*ParseDurationFlag("arrival-delay", "0") == milliseconds(0));
  CHECK(*ParseDurationFlag("schedule-period", "1ms", milliseconds(1)) == milliseconds(1));
  absl::StatusOr<milliseconds> zero = ParseDurationFlag("schedule-period", "0s", milliseconds(1));
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message() == "--schedule-period: must be at least 1ms, got 0s");
  absl::StatusOr<milliseconds> bad = ParseDurationFlag("schedule-period", "soon");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).starts_with("--schedule-period: "));
}

TEST_CASE("FirstError: the first failed check, OK when all pass", "[flags]") {
  CHECK(FirstError({}).ok());
  CHECK(FirstError({CheckAtLeast("a", 1, 0), CheckAtLeast("b", 2, 0)}).ok());
  CHECK(FirstError({CheckAtLeast("a", 1, 0), CheckAtLeast("b", -1, 0), CheckAtLeast("c", -1, 0)})
            .message() == "--b: must be at least 0, got -1");
}

TEST_CASE("ExitCode: 0 for a clean stop, 1 for an error", "[runner]") {
  CHECK(ExitCode(absl::OkStatus()) == 0);
  CHECK(ExitCode(absl::InternalError("boom")) == 1);
}

}  // namespace
}  // namespace basalt::runtime
