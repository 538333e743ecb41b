#include "common/client/flags.h"

#include <stdlib.h>

#include <catch2/catch.hpp>

#include "common/util/status.h"

using basalt::MessageOf;
using namespace basalt::client;

TEST_CASE("FlagSet: --name=value, --name value, -name and bare bools", "[flags]") {
  FlagSet flags("test");
  ClientOptions options;
  options.AddFlags(flags);
  bool leader_elect = true;
  int v = 0;
  std::vector<std::string> controllers = {"job", "queue"};
  flags.Bool("leader-elect", &leader_elect, "elect");
  flags.Int("v", &v, "verbosity");
  flags.StringList("controllers", &controllers, "controllers");
  REQUIRE(options.kube_api_qps == 50);
  REQUIRE(options.kube_api_burst == 100);
  std::vector<std::string> positional;
  absl::Status s =
      flags.Parse({"--kubeconfig=/a:/b", "--master", "https://m:6443", "-v=4", "--kube-api-qps",
                   "12.5", "--kube-api-burst=7", "--leader-elect=false", "--controllers=job,gc",
                   "pos", "--", "--not-a-flag"},
                  &positional);
  REQUIRE(s.ok());
  REQUIRE(options.kubeconfig == "/a:/b");
  REQUIRE(options.master == "https://m:6443");
  REQUIRE(options.kube_api_qps == 12.5);
  REQUIRE(options.kube_api_burst == 7);
  REQUIRE(v == 4);
  REQUIRE_FALSE(leader_elect);
  REQUIRE(controllers == std::vector<std::string>{"job", "gc"});
  REQUIRE(positional == std::vector<std::string>{"pos", "--not-a-flag"});
  REQUIRE(flags.Parse({"--leader-elect"}).ok());
  REQUIRE(leader_elect);
  REQUIRE(flags.Usage().find("--kube-api-qps value") != std::string::npos);
}

TEST_CASE("FlagSet: unknown flags and bad values are errors naming the flag", "[flags]") {
  FlagSet flags;
  ClientOptions options;
  options.AddFlags(flags);
  absl::Status unknown = flags.Parse({"--kubeconfg=/x"});
  REQUIRE(unknown.code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(MessageOf(unknown) == "unknown flag --kubeconfg");
  absl::Status bad = flags.Parse({"--kube-api-burst=lots"});
  REQUIRE(MessageOf(bad) == "invalid value \"lots\" for flag --kube-api-burst: not a number");
  REQUIRE(MessageOf(flags.Parse({"--master"})) == "flag --master needs a value");
  REQUIRE(flags.Parse({"stray"}).code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(flags.Parse({"--help"}).code() == absl::StatusCode::kCancelled);
}

TEST_CASE("ConfigFromOptions: --master alone gives a credential-less config", "[flags]") {
  unsetenv("KUBECONFIG");
  unsetenv("KUBERNETES_SERVICE_HOST");
  setenv("HOME", "/nonexistent-home-for-test", 1);
  ClientOptions options;
  options.master = "https://10.0.0.1:6443";
  options.kube_api_qps = 5;
  absl::StatusOr<RestConfig> config = ConfigFromOptions(options);
  REQUIRE(config.ok());
  REQUIRE(config->server == "https://10.0.0.1:6443");
  REQUIRE(config->qps == 5);
  REQUIRE(config->burst == 100);
  options.master.clear();
  REQUIRE(ConfigFromOptions(options).status().code() == absl::StatusCode::kFailedPrecondition);
}
