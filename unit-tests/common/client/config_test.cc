#include "common/client/config.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "common/client/flags.h"
#include "common/util/clock.h"
#include "common/util/status.h"

using basalt::MessageOf;
using namespace basalt::client;

namespace {

// A scratch directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/basalt-config-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { (void)system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::string path_;
};

std::string B64(const std::string& s) {
  std::string out;
  absl::Base64Escape(absl::string_view(s.data(), s.size()), &out);
  return out;
}

const char kCa[] = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
const char kCert[] = "-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n";
const char kKey[] = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";

std::string DataKubeconfig() {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "current-context: admin@local\n"
         "clusters:\n"
         "- name: local\n"
         "  cluster:\n"
         "    server: https://127.0.0.1:6443\n"
         "    certificate-authority-data: " +
         B64(kCa) +
         "\n"
         "users:\n"
         "- name: admin\n"
         "  user:\n"
         "    client-certificate-data: " +
         B64(kCert) +
         "\n"
         "    client-key-data: " +
         B64(kKey) +
         "\n"
         "contexts:\n"
         "- name: admin@local\n"
         "  context:\n"
         "    cluster: local\n"
         "    user: admin\n"
         "    namespace: team-a\n";
}

}  // namespace

TEST_CASE("LoadKubeconfig: *-data fields of the current context", "[config]") {
  TempDir dir;
  std::string path = dir.Write("config", DataKubeconfig());
  absl::StatusOr<RestConfig> c = LoadKubeconfig({{path}, true, ""});
  REQUIRE(c.ok());
  REQUIRE(c->server == "https://127.0.0.1:6443");
  REQUIRE(c->ca_pem == kCa);
  REQUIRE(c->client_cert_pem == kCert);
  REQUIRE(c->client_key_pem == kKey);
  REQUIRE(c->default_namespace == "team-a");
  REQUIRE_FALSE(c->insecure_skip_tls_verify);
  REQUIRE(c->qps == 50);
  REQUIRE(c->burst == 100);
}

TEST_CASE("LoadKubeconfig: file fields resolve relative to the kubeconfig's directory",
          "[config]") {
  TempDir dir;
  dir.Write("ca.crt", kCa);
  dir.Write("admin.crt", kCert);
  dir.Write("admin.key", kKey);
  dir.Write("token", "  sekret-token\n");
  std::string path = dir.Write("config",
                               "current-context: c\n"
                               "clusters:\n"
                               "- name: k\n"
                               "  cluster:\n"
                               "    server: https://api.example.com\n"
                               "    certificate-authority: ca.crt\n"
                               "    tls-server-name: kubernetes\n"
                               "users:\n"
                               "- name: u\n"
                               "  user:\n"
                               "    client-certificate: admin.crt\n"
                               "    client-key: " +
                                   dir.path() +
                                   "/admin.key\n"
                                   "    tokenFile: token\n"
                                   "contexts:\n"
                                   "- name: c\n"
                                   "  context: {cluster: k, user: u}\n");
  absl::StatusOr<RestConfig> c = LoadKubeconfig({{path}, true, ""});
  REQUIRE(c.ok());
  REQUIRE(c->ca_pem == kCa);
  REQUIRE(c->client_cert_pem == kCert);
  REQUIRE(c->client_key_pem == kKey);
  REQUIRE(c->bearer_token_file == dir.path() + "/token");
  REQUIRE(c->tls_server_name == "kubernetes");
  REQUIRE(c->default_namespace == "default");
}

TEST_CASE("LoadKubeconfig: -data wins over the file field", "[config]") {
  TempDir dir;
  std::string path = dir.Write("config",
                               "current-context: c\n"
                               "clusters:\n"
                               "- name: k\n"
                               "  cluster:\n"
                               "    server: https://h:1\n"
                               "    certificate-authority: does-not-exist.crt\n"
                               "    certificate-authority-data: " +
                                   B64(kCa) +
                                   "\n"
                                   "contexts:\n"
                                   "- name: c\n"
                                   "  context: {cluster: k}\n");
  absl::StatusOr<RestConfig> c = LoadKubeconfig({{path}, true, ""});
  REQUIRE(c.ok());
  REQUIRE(c->ca_pem == kCa);
}

TEST_CASE("LoadKubeconfig: two files merge, the first definition of a name wins", "[config]") {
  TempDir dir;
  std::string first = dir.Write("first",
                                "current-context: dev\n"
                                "clusters:\n"
                                "- name: shared\n"
                                "  cluster: {server: 'https://first:6443', "
                                "insecure-skip-tls-verify: true}\n"
                                "contexts:\n"
                                "- name: dev\n"
                                "  context: {cluster: shared, user: bob, namespace: dev}\n");
  std::string second = dir.Write("second",
                                 "current-context: prod\n"
                                 "clusters:\n"
                                 "- name: shared\n"
                                 "  cluster: {server: 'https://second:6443'}\n"
                                 "- name: prod\n"
                                 "  cluster: {server: 'https://prod:6443'}\n"
                                 "users:\n"
                                 "- name: bob\n"
                                 "  user: {token: bob-token}\n"
                                 "contexts:\n"
                                 "- name: dev\n"
                                 "  context: {cluster: prod, user: bob}\n"
                                 "- name: prod\n"
                                 "  context: {cluster: prod, user: bob, namespace: prod}\n");
  std::string missing = dir.path() + "/missing";
  auto paths = SplitKubeconfigPaths(first + "::" + second + ":" + missing);
  REQUIRE(paths.size() == 3);

  absl::StatusOr<RestConfig> c = LoadKubeconfig({paths, false, ""});
  REQUIRE(c.ok());
  REQUIRE(c->server == "https://first:6443");  // context "dev" and cluster "shared" from first
  REQUIRE(c->insecure_skip_tls_verify);
  REQUIRE(c->bearer_token == "bob-token");  // user only defined in second
  REQUIRE(c->default_namespace == "dev");

  absl::StatusOr<RestConfig> prod = LoadKubeconfig({paths, false, "prod"});
  REQUIRE(prod.ok());
  REQUIRE(prod->server == "https://prod:6443");
  REQUIRE(prod->default_namespace == "prod");

  // An explicit list must exist entirely.
  absl::StatusOr<RestConfig> strict = LoadKubeconfig({paths, true, ""});
  REQUIRE(strict.status().code() == absl::StatusCode::kNotFound);
  REQUIRE(MessageOf(strict.status()).find(missing) != std::string_view::npos);
}

TEST_CASE("LoadKubeconfig: errors name the file and the field", "[config]") {
  TempDir dir;
  SECTION("malformed YAML") {
    std::string path = dir.Write("bad", "clusters: [\n  - name: x\n   cluster: {\n");
    absl::Status s = LoadKubeconfig({{path}, true, ""}).status();
    REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
    REQUIRE(MessageOf(s).find("kubeconfig " + path + ": invalid YAML") == 0);
  }
  SECTION("clusters is not a list") {
    std::string path = dir.Write("bad", "clusters: {a: b}\n");
    absl::Status s = LoadKubeconfig({{path}, true, ""}).status();
    REQUIRE(MessageOf(s) == "kubeconfig " + path + ": clusters: expected a list");
  }
  SECTION("missing context") {
    std::string path = dir.Write("config", DataKubeconfig());
    absl::Status s = LoadKubeconfig({{path}, true, "nope"}).status();
    REQUIRE(s.code() == absl::StatusCode::kNotFound);
    REQUIRE(MessageOf(s) ==
            "kubeconfig " + path + ": context \"nope\" not found (contexts: admin@local)");
  }
  SECTION("no current context") {
    std::string path = dir.Write("config", "clusters: []\n");
    absl::Status s = LoadKubeconfig({{path}, true, ""}).status();
    REQUIRE(MessageOf(s).find("no current-context") != std::string_view::npos);
  }
  SECTION("missing certificate file") {
    std::string path = dir.Write("config",
                                 "current-context: c\n"
                                 "clusters:\n"
                                 "- {name: k, cluster: {server: 'https://h'}}\n"
                                 "users:\n"
                                 "- name: admin\n"
                                 "  user: {client-certificate: admin.crt, client-key: admin.key}\n"
                                 "contexts:\n"
                                 "- {name: c, context: {cluster: k, user: admin}}\n");
    absl::Status s = LoadKubeconfig({{path}, true, ""}).status();
    REQUIRE(s.code() == absl::StatusCode::kNotFound);
    REQUIRE(MessageOf(s) == "kubeconfig " + path +
                                ": users[\"admin\"].user.client-certificate: cannot read " +
                                dir.path() + "/admin.crt: No such file or directory");
  }
  SECTION("bad base64") {
    std::string path = dir.Write("config",
                                 "current-context: c\n"
                                 "clusters:\n"
                                 "- {name: k, cluster: {server: 'https://h', "
                                 "certificate-authority-data: '!!notbase64'}}\n"
                                 "contexts:\n"
                                 "- {name: c, context: {cluster: k}}\n");
    absl::Status s = LoadKubeconfig({{path}, true, ""}).status();
    REQUIRE(MessageOf(s).find("clusters[\"k\"].cluster.certificate-authority-data: invalid "
                              "base64") != std::string_view::npos);
  }
  SECTION("bad bool") {
    std::string path = dir.Write("config",
                                 "current-context: c\n"
                                 "clusters:\n"
                                 "- {name: k, cluster: {server: 'https://h', "
                                 "insecure-skip-tls-verify: [1]}}\n"
                                 "contexts:\n"
                                 "- {name: c, context: {cluster: k}}\n");
    absl::Status s = LoadKubeconfig({{path}, true, ""}).status();
    REQUIRE(MessageOf(s).find("insecure-skip-tls-verify: expected a string") !=
            std::string_view::npos);
  }
  SECTION("exec credentials are reported as unsupported") {
    std::string path = dir.Write("config",
                                 "current-context: c\n"
                                 "clusters:\n"
                                 "- {name: k, cluster: {server: 'https://h'}}\n"
                                 "users:\n"
                                 "- {name: u, user: {exec: {command: aws}}}\n"
                                 "contexts:\n"
                                 "- {name: c, context: {cluster: k, user: u}}\n");
    REQUIRE(LoadKubeconfig({{path}, true, ""}).status().code() == absl::StatusCode::kUnimplemented);
  }
  SECTION("file does not exist") {
    absl::Status s = LoadKubeconfig({{dir.path() + "/nope"}, true, ""}).status();
    REQUIRE(MessageOf(s).find("kubeconfig: cannot read " + dir.path() + "/nope") == 0);
  }
}

TEST_CASE("InClusterConfig: service account files and env", "[config]") {
  TempDir dir;
  InClusterPaths paths{dir.Write("token", "tok-1\n"), dir.Write("ca.crt", kCa),
                       dir.Write("namespace", "volcano-system\n")};
  unsetenv("KUBERNETES_SERVICE_HOST");
  REQUIRE(InClusterConfig(paths).status().code() == absl::StatusCode::kFailedPrecondition);
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  absl::StatusOr<RestConfig> c = InClusterConfig(paths);
  REQUIRE(c.ok());
  REQUIRE(c->server == "https://10.96.0.1:443");
  REQUIRE(c->ca_pem == kCa);
  REQUIRE(c->bearer_token_file == paths.token);
  REQUIRE(c->default_namespace == "volcano-system");
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  REQUIRE(InClusterConfig(paths)->server == "https://[fd00::1]:443");
  paths.ca = dir.path() + "/missing.crt";
  REQUIRE(MessageOf(InClusterConfig(paths).status()).find("service account CA") !=
          std::string_view::npos);
}

TEST_CASE("TokenSource: a rotated token file is picked up after the refresh period", "[config]") {
  TempDir dir;
  std::string path = dir.Write("token", "first\n");
  basalt::FakeClock clock;
  TokenSource source("static", path, &clock, std::chrono::seconds(60));
  REQUIRE(source.Token() == "first");
  dir.Write("token", "second\n");
  clock.Advance(std::chrono::seconds(59));
  REQUIRE(source.Token() == "first");
  clock.Advance(std::chrono::seconds(1));
  REQUIRE(source.Token() == "second");
  // An unreadable file keeps the last good token.
  unlink(path.c_str());
  clock.Advance(std::chrono::seconds(61));
  REQUIRE(source.Token() == "second");

  TokenSource static_only("static", "", &clock);
  REQUIRE(static_only.Token() == "static");
}
