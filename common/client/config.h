#pragma once
// How to reach and authenticate to an API server: RestConfig, built from kubeconfig files
// (LoadKubeconfig, with kubectl's KUBECONFIG merge rules) or from a pod's service account
// (InClusterConfig). ConfigFromOptions (flags.h) picks between them as client-go does.
//
// All functions here are thread-compatible; FileTokenSource is thread-safe.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/util/clock.h"

namespace basalt::client {

// Everything needed to open TLS connections to one API server. PEM material is held in memory
// (read from files at load time); only the bearer token file is re-read later, so that rotated
// service-account tokens keep working.
struct RestConfig {
  std::string server;  // "https://host:port" with an optional path prefix
  std::string ca_pem;  // trusted CA bundle; empty = system roots
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string bearer_token;
  std::string bearer_token_file;  // if set, re-read periodically; wins over bearer_token
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides the name checked against the certificate (and SNI)
  std::string default_namespace = "default";
  double qps = 50;  // client-side rate limit; <= 0 disables it
  int burst = 100;
  std::string user_agent = "basalt";
  // Where this config came from ("kubeconfig /x (context admin)", "in-cluster"), for messages.
  std::string source;
};

struct KubeconfigOptions {
  // Files to merge in order (kubectl rules: the first file to define a cluster, user or context
  // name wins; the first non-empty current-context wins). Files that do not exist are skipped
  // unless `require_all` is set (an explicit --kubeconfig must exist).
  std::vector<std::string> paths;
  bool require_all = true;
  std::string context;  // empty = current-context
};

// Loads and merges kubeconfig files and resolves one context into a RestConfig. Relative file
// paths inside a kubeconfig resolve against that file's directory; *-data fields win over their
// file counterparts. Errors name the file and field, e.g.
//   kubeconfig /home/u/.kube/config: users["admin"].client-certificate: cannot read
//   /home/u/.kube/admin.crt: No such file or directory
// Unsupported auth (exec, auth-provider) in the chosen user is kUnimplemented.
absl::StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options);

// Splits a KUBECONFIG value on ':' (empty entries dropped).
std::vector<std::string> SplitKubeconfigPaths(std::string_view env_value);

struct InClusterPaths {
  std::string token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string ns = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

// True when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are set.
bool InClusterEnvironment();

// Config of a pod's service account: server from KUBERNETES_SERVICE_HOST/PORT (IPv6 bracketed),
// CA and token from `paths` (the token as bearer_token_file, so rotation is picked up), the
// pod's namespace as default. kFailedPrecondition outside a cluster.
absl::StatusOr<RestConfig> InClusterConfig(const InClusterPaths& paths = {});

// Returns the bearer token of a RestConfig: the file's content (trimmed), re-read when older
// than `refresh` so rotated tokens are used; falls back to the last good value (or the static
// token) when the file cannot be read. Thread-safe.
class TokenSource {
 public:
  TokenSource(std::string static_token, std::string file, Clock* clock,
              std::chrono::seconds refresh = std::chrono::seconds(60));
  TokenSource(const TokenSource&) = delete;
  TokenSource& operator=(const TokenSource&) = delete;

  // Empty when there is no token at all.
  std::string Token();

 private:
  const std::string file_;
  Clock* const clock_;
  const std::chrono::seconds refresh_;
  std::mutex mu_;
  std::string token_;
  bool loaded_ = false;
  Clock::TimePoint loaded_at_;
};

// Reads a whole file; the error names the path and errno text.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace basalt::client
