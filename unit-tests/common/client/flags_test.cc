#include "common/client/flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

namespace {

// Writes `text` to `dir`/`name` and returns the path.
std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  FILE* f = fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  REQUIRE(fwrite(text.data(), 1, text.size(), f) == text.size());
  fclose(f);
  return path;
}

}  // namespace

TEST_CASE("ConfigFromOptions: KUBECONFIG with several files merges them and --context picks one",
          "[flags]") {
  char tmpl[] = "/tmp/basalt-flags-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  std::string a = WriteFile(dir, "a",
                            "current-context: dev\n"
                            "clusters:\n"
                            "- name: dev\n"
                            "  cluster: {server: 'https://dev:6443'}\n"
                            "contexts:\n"
                            "- name: dev\n"
                            "  context: {cluster: dev, user: alice}\n");
  std::string b = WriteFile(dir, "b",
                            "current-context: prod\n"
                            "clusters:\n"
                            "- name: prod\n"
                            "  cluster: {server: 'https://prod:6443'}\n"
                            "users:\n"
                            "- name: alice\n"
                            "  user: {token: alice-token}\n"
                            "contexts:\n"
                            "- name: prod\n"
                            "  context: {cluster: prod, user: alice, namespace: team}\n");
  const std::string missing = dir + "/missing";
  unsetenv("KUBERNETES_SERVICE_HOST");
  setenv("HOME", "/nonexistent-home-for-test", 1);
  setenv("KUBECONFIG", (a + ":" + missing + ":" + b).c_str(), 1);

  // No flags: the first file's current-context, the user from the second file.
  {
    FlagSet flags;
    ClientOptions options;
    options.AddFlags(flags);
    REQUIRE(flags.Parse(std::vector<std::string>{}).ok());
    absl::StatusOr<RestConfig> config = ConfigFromOptions(options);
    INFO(MessageOf(config.status()));
    REQUIRE(config.ok());
    CHECK(config->server == "https://dev:6443");
    CHECK(config->bearer_token == "alice-token");
    CHECK(config->default_namespace == "default");
  }
  // --context selects a context defined in another file; qps/burst flags are copied.
  {
    FlagSet flags;
    ClientOptions options;
    options.AddFlags(flags);
    REQUIRE(flags.Parse({"--context=prod", "--kube-api-qps=7", "--kube-api-burst", "9"}).ok());
    CHECK(options.context == "prod");
    absl::StatusOr<RestConfig> config = ConfigFromOptions(options);
    INFO(MessageOf(config.status()));
    REQUIRE(config.ok());
    CHECK(config->server == "https://prod:6443");
    CHECK(config->default_namespace == "team");
    CHECK(config->qps == 7);
    CHECK(config->burst == 9);
  }
  // --master overrides the server but keeps the context's credentials.
  {
    FlagSet flags;
    ClientOptions options;
    options.AddFlags(flags);
    REQUIRE(flags.Parse({"--context", "prod", "--master=https://10.1.2.3:6443"}).ok());
    absl::StatusOr<RestConfig> config = ConfigFromOptions(options);
    REQUIRE(config.ok());
    CHECK(config->server == "https://10.1.2.3:6443");
    CHECK(config->bearer_token == "alice-token");
  }
  // An unknown --context names the files and the contexts they define.
  {
    ClientOptions options;
    options.context = "staging";
    absl::Status s = ConfigFromOptions(options).status();
    CHECK(s.code() == absl::StatusCode::kNotFound);
    CHECK(MessageOf(s).find("context \"staging\" not found") != std::string_view::npos);
    CHECK(MessageOf(s).find("dev, prod") != std::string_view::npos);
    CHECK(MessageOf(s).find(a) != std::string_view::npos);
  }
  // --kubeconfig wins over KUBECONFIG, and every file it names must exist.
  {
    ClientOptions options;
    options.kubeconfig = b + ":" + missing;
    absl::Status s = ConfigFromOptions(options).status();
    CHECK(s.code() == absl::StatusCode::kNotFound);
    CHECK(MessageOf(s).find(missing) != std::string_view::npos);
    options.kubeconfig = b;
    absl::StatusOr<RestConfig> config = ConfigFromOptions(options);
    REQUIRE(config.ok());
    CHECK(config->server == "https://prod:6443");
  }
  unsetenv("KUBECONFIG");
  for (const std::string& p : {a, b}) unlink(p.c_str());
  rmdir(dir.c_str());
}
