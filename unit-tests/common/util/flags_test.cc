#include "common/util/flags.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "common/util/status.h"

namespace basalt {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST_CASE("FlagSet: durations in Go syntax, bools as Go's ParseBool", "[flags]") {
  FlagSet flags("test");
  nanoseconds period = seconds(1);
  bool on = false;
  flags.Duration("period", &period, "period");
  flags.Bool("on", &on, "on");
  REQUIRE(flags.Parse({"--period=1m30s"}).ok());
  CHECK(period == seconds(90));
  REQUIRE(flags.Parse({"-period", "250ms"}).ok());
  CHECK(period == milliseconds(250));
  CHECK(MessageOf(flags.Parse({"--period=10"})) ==
        "invalid value \"10\" for flag --period: want a duration such as 15s or 1m30s");
  for (const char* t : {"true", "1", "t", "T", "True", "TRUE"}) {
    on = false;
    REQUIRE(flags.Parse({std::string("--on=") + t}).ok());
    CHECK(on);
  }
  for (const char* f : {"false", "0", "f", "F", "False", "FALSE"}) {
    on = true;
    REQUIRE(flags.Parse({std::string("-on=") + f}).ok());
    CHECK_FALSE(on);
  }
  CHECK(MessageOf(flags.Parse({"--on=maybe"})) ==
        "invalid value \"maybe\" for flag --on: not a bool");
  // The default shown is the value at registration, as in Go.
  CHECK(flags.Usage().find("--period value\n        period (default \"1s\")") != std::string::npos);
}

TEST_CASE("FlagSet: a repeatable flag replaces its default, then appends", "[flags]") {
  FlagSet flags;
  std::vector<std::string> names = {"volcano"};
  flags.StringArray("scheduler-name", &names, "names");
  REQUIRE(flags.Parse(std::vector<std::string>{}).ok());
  CHECK(names == std::vector<std::string>{"volcano"});
  REQUIRE(flags.Parse({"--scheduler-name=a,b", "--scheduler-name", "c", "-scheduler-name=d"}).ok());
  CHECK(names == std::vector<std::string>{"a,b", "c", "d"});
  REQUIRE(flags.Parse({"--scheduler-name=e"}).ok());  // each Parse starts over
  CHECK(names == std::vector<std::string>{"e"});
  CHECK(MessageOf(flags.Parse({"--scheduler-name"})) == "flag --scheduler-name needs a value");
}

TEST_CASE("FlagSet: Func flags validate their values and name the flag", "[flags]") {
  FlagSet flags;
  std::string name = "dflt";
  flags.Func("name", "a name", name, [&](std::string_view v) -> absl::Status {
    if (v.empty()) return absl::InvalidArgumentError("must not be empty");
    name = std::string(v);
    return absl::OkStatus();
  });
  REQUIRE(flags.Parse({"--name", "x"}).ok());
  CHECK(name == "x");
  absl::Status s = flags.Parse({"--name="});
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(MessageOf(s) == "invalid value \"\" for flag --name: must not be empty");
  CHECK(name == "x");
  CHECK(flags.Usage().find("a name (default \"dflt\")") != std::string::npos);
}

TEST_CASE("FlagSet: ParseKnown takes its flags out and leaves the rest in order", "[flags]") {
  FlagSet flags;
  std::string addr = ":8080";
  bool on = false;
  flags.String("addr", &addr, "addr");
  flags.Bool("on", &on, "on");
  std::vector<std::string> args = {"--other", "v1",   "--addr", ":9",       "pos",
                                   "--on",    "-x=1", "--",     "--addr=:7"};
  REQUIRE(flags.ParseKnown(args).ok());
  CHECK(addr == ":9");
  CHECK(on);
  CHECK(args == std::vector<std::string>{"--other", "v1", "pos", "-x=1", "--", "--addr=:7"});

  std::vector<std::string> help = {"--help", "-h"};
  REQUIRE(flags.ParseKnown(help).ok());  // help is the binary's parser's to answer
  CHECK(help == std::vector<std::string>{"--help", "-h"});

  std::vector<std::string> bad = {"--keep", "--on=maybe"};
  CHECK(flags.ParseKnown(bad).code() == absl::StatusCode::kInvalidArgument);
  CHECK(bad == std::vector<std::string>{"--keep", "--on=maybe"});
}

}  // namespace
}  // namespace basalt
